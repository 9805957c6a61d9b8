"""The bench's plumbing: sandbox, daemon start and stop, a synchronous socket client, CPU meter, disk size."""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec

from hippoctl import __version__ as CLIENT_VERSION
from hippoctl.protocol import messages as m
from hippoctl.protocol.framing import pack, recv_frame
from hippoctl.protocol.version import PROTOCOL
from hippod.integrations.service_render import AGENT_HOME_VARS
from hippod.mirrors.mirror_heal import MEMORY_DIRS

MIRROR_WAIT = 30.0
SANDBOX_DIRS = ("u", "home", "run", "state", "data", "config", "cache")
SANDBOX_KEYS = ("HIPPO_HOME", "HIPPO_SOCKET", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_DATA_HOME")


class BenchError(Exception):
    """Something the bench cannot measure around."""


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def pct(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100), linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


# --- a synchronous socket client -----------------------------------------------------------------

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(m.DaemonMessage).decode


def _read(sock: socket.socket) -> Any:
    raw = recv_frame(sock)
    if raw is None:
        raise BenchError("daemon closed the connection before replying")
    return _decode(raw)


def call(
    sock_path: str, home: str, cwd: str, body: m.Body, timeout: float = 60.0, *, global_store: bool = True
) -> m.Result | m.Error:
    """One request the way hippoctl sends it: connect, Hello and Request in one write, Welcome, replies."""
    hello = m.Hello(protocol=PROTOCOL, client_version=CLIENT_VERSION, pid=os.getpid(), home=home)
    request = m.Request(id=1, cwd=cwd, body=body, global_store=global_store)  # type: ignore[arg-type]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(sock_path)
        sock.sendall(pack(_encode(hello)) + pack(_encode(request)))
        welcome = _read(sock)
        if isinstance(welcome, m.Error):
            return welcome
        if not isinstance(welcome, m.Welcome):
            raise BenchError(f"expected Welcome, got {welcome!r}")
        while True:
            reply = _read(sock)
            if isinstance(reply, m.Result | m.Error):
                return reply


# --- timing a command ----------------------------------------------------------------------------


def timed_run(
    command: Sequence[str], env: dict[str, str], cwd: str, stdin: bytes | None = None, *, check: bool = True
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    """Run one command as a fresh process, output captured: (wall milliseconds, what it did).

    With `check`, a non-zero exit is a BenchError naming the command and the start of its stderr.
    """
    started = time.perf_counter()
    done = subprocess.run(list(command), input=stdin, env=env, cwd=cwd, capture_output=True, check=False)
    took = (time.perf_counter() - started) * 1000
    if check and done.returncode != 0:
        raise BenchError(f"{list(command)} exited {done.returncode}: {done.stderr.decode()[:300]}")
    return took, done


# --- sandbox and daemon --------------------------------------------------------------------------

_DAEMONS: list[subprocess.Popen[bytes]] = []


@dataclass
class Sandbox:
    base: str
    home: str
    sock: str
    env: dict[str, str]
    user_home: str


def make_sandbox(size: int, parent: str = "/tmp") -> Sandbox:
    """HOME, HIPPO_HOME, HIPPO_SOCKET and the XDG dirs under one short folder (socket paths have a length
    limit).

    HOME is an empty folder of the sandbox (and the agents' own home variables are dropped): with the
    user's, `init` would import the user's agent notes (~/.claude, ~/.codex, ~/.gemini, ...) into the
    sandbox's global store, recall would return them among the bench's memories, and hooks would be
    installed into the user's agent settings.
    """
    base = tempfile.mkdtemp(prefix=f"hb{size}-", dir=parent)
    for name in SANDBOX_DIRS:
        path = os.path.join(base, name)
        os.makedirs(path, mode=0o700)
        os.chmod(path, 0o700)
    sb = sandbox_at(base)
    # The performance figures are those of the default, no-model recall, whether or not the
    # embed extra is installed in this environment, and of no automatic sleep mid-run.
    with open(os.path.join(sb.home, "config.json"), "w", encoding="utf-8") as f:
        f.write('{"embeddings": {"enabled": false}, "autoSleep": {"enabled": false}}\n')
    # Nor of the daily run's sleep at 06:15, which a long bench would otherwise cross.
    with open(os.path.join(sb.home, "daemon.json"), "w", encoding="utf-8") as f:
        f.write('{"daily": {"enabled": false}}\n')
    return sb


def sandbox_at(base: str) -> Sandbox:
    """The sandbox of a folder make_sandbox made (a kept one, to measure its store again)."""
    dirs = {name: os.path.join(base, name) for name in SANDBOX_DIRS}
    env = {k: v for k, v in os.environ.items() if k not in m.REQUEST_ENV and k not in AGENT_HOME_VARS}
    env.update(
        HOME=dirs["u"],
        HIPPO_HOME=dirs["home"],
        HIPPO_SOCKET=os.path.join(base, "d.sock"),
        XDG_RUNTIME_DIR=dirs["run"],
        XDG_STATE_HOME=dirs["state"],
        XDG_DATA_HOME=dirs["data"],
        XDG_CONFIG_HOME=dirs["config"],
        XDG_CACHE_HOME=dirs["cache"],
        HIPPO_NO_SPAWN="1",
    )
    return Sandbox(base, os.path.realpath(dirs["home"]), env["HIPPO_SOCKET"], env, dirs["u"])


@contextlib.contextmanager
def sandbox_environ(sb: Sandbox) -> Iterator[None]:
    """Point this process at the sandbox (StoreRegistry reads HIPPO_HOME), then restore."""
    saved = {k: os.environ.get(k) for k in SANDBOX_KEYS}
    os.environ.update({k: sb.env[k] for k in SANDBOX_KEYS})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def start_daemon(sb: Sandbox, command: Sequence[str] = ("run",)) -> subprocess.Popen[bytes]:
    """Start `hippod run` (or another command, e.g. a team server's `serve --team ...`) in the sandbox
    and wait until it answers on its socket."""
    out = open(os.path.join(sb.base, "daemon.out"), "wb")  # noqa: SIM115 - lives as long as the daemon
    proc = subprocess.Popen(
        [sys.executable, "-m", "hippod", *command],
        env=sb.env,
        cwd=sb.base,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    out.close()
    _DAEMONS.append(proc)
    deadline = time.monotonic() + 15.0
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"daemon exited with {proc.returncode}; see {sb.base}/daemon.out")
        with contextlib.suppress(OSError, BenchError):
            if isinstance(call(sb.sock, sb.home, sb.base, m.Ping(), timeout=1.0), m.Result):
                return proc
        time.sleep(0.05)
    raise BenchError("daemon did not answer within 15 s")


def stop_daemon(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc in _DAEMONS:
        _DAEMONS.remove(proc)


def kill_all_daemons() -> None:
    for proc in list(_DAEMONS):
        stop_daemon(proc)


def proc_status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


# --- CPU per thread -------------------------------------------------------------------------------

# Thread creation order in a daemon (checked against thread names in-process): the event loop, the
# default executor's first thread (store preparation, then mirror writes), then aiosqlite's writer and
# reader threads of the global store. Later executor threads also write mirrors.
THREAD_ROLES = ("loop", "mirrors", "writer", "reader")


def thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds (user + system) per thread id of a process."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[int, float] = {}
    for name in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{name}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
            out[int(name)] = (int(fields[11]) + int(fields[12])) / tick
    return out


@dataclass
class CpuUse:
    """Daemon CPU by thread role, and the bench process's own CPU, over some number of operations."""

    ops: int
    daemon: dict[str, float]
    bench: float

    def per_op_ms(self, role: str) -> float:
        if role == "total":
            return sum(self.daemon.values()) / self.ops * 1e3
        return self.daemon.get(role, 0.0) / self.ops * 1e3


class CpuMeter:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.before = thread_cpu(pid)
        self.bench_before = time.process_time()
        self.bench_after: float | None = None

    def freeze_bench(self) -> None:
        """End the bench-process window here (before waiting on the daemon, which polls the disk)."""
        self.bench_after = time.process_time()

    def stop(self, ops: int) -> CpuUse:
        after = thread_cpu(self.pid)
        roles: dict[str, float] = {}
        others = sorted(t for t in after if t != self.pid)
        for tid, used in after.items():
            if tid == self.pid:
                role = "loop"
            else:
                index = others.index(tid) + 1
                role = THREAD_ROLES[index] if index < len(THREAD_ROLES) else "mirrors"
            roles[role] = roles.get(role, 0.0) + used - self.before.get(tid, 0.0)
        bench_after = self.bench_after if self.bench_after is not None else time.process_time()
        return CpuUse(max(ops, 1), roles, bench_after - self.bench_before)


# --- disk -----------------------------------------------------------------------------------------


_SECTION = re.compile(rb"^## [a-z]+_[0-9a-f]+$", re.MULTILINE)


def count_mirrors(home: str) -> int:
    """The memories mirrored under a store root: a file each in a layer folder, or a `## <id>`
    section each in the day layout's `YYYY/MM/` files (mirrors/mirror_days.py)."""
    total = 0
    for layer in MEMORY_DIRS:
        with contextlib.suppress(FileNotFoundError), os.scandir(os.path.join(home, layer)) as entries:
            for entry in entries:
                if entry.is_dir() and entry.name.isdigit():
                    total += _day_sections(entry.path)
                elif entry.name.endswith(".md"):
                    total += 1
    return total


def _day_sections(year: str) -> int:
    total = 0
    for folder, _, names in os.walk(year):
        for name in names:
            if name.endswith(".md"):
                with contextlib.suppress(FileNotFoundError), open(os.path.join(folder, name), "rb") as handle:
                    total += len(_SECTION.findall(handle.read()))
    return total


def wait_for_mirrors(home: str, expected: int, timeout: float = MIRROR_WAIT) -> tuple[float, int]:
    """(seconds until every memory has its Markdown mirror, mirrors still missing at the timeout)."""
    start = time.monotonic()
    while True:
        counted = time.monotonic()
        found = count_mirrors(home)
        if found >= expected:
            return time.monotonic() - start, 0
        if counted - start > timeout:
            return float("nan"), expected - found
        # Counting a million files takes seconds: poll no more often than a quarter of that.
        time.sleep(max(0.2, 4 * (time.monotonic() - counted)))


@dataclass
class Disk:
    db_bytes: int
    wal_bytes: int
    mirror_files: int
    mirror_bytes: int
    mirror_alloc: int


def measure_disk(home: str) -> Disk:
    sizes = {}
    for suffix in ("", "-wal", "-shm"):
        path = os.path.join(home, "hippo.db" + suffix)
        sizes[suffix] = os.path.getsize(path) if os.path.exists(path) else 0
    files = apparent = allocated = 0
    for layer in MEMORY_DIRS:
        for folder, _, names in os.walk(os.path.join(home, layer)):
            for name in names:
                try:
                    st = os.stat(os.path.join(folder, name))
                except FileNotFoundError:  # a mirror pass renamed its temporary file meanwhile
                    continue
                files += 1
                apparent += st.st_size
                allocated += st.st_blocks * 512
    return Disk(sizes[""], sizes["-wal"] + sizes["-shm"], files, apparent, allocated)
