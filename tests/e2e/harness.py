"""The e2e harness: a real daemon subprocess on a real Unix socket with real SQLite files,
driven through the real `hippoctl` client or a raw socket."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from e2e.raw_conn import RawConn as RawConn  # re-exported: tests take it from the harness
from hippoctl.protocol import messages as m

# Inherited variables that would change what a daemon or client does.
SCRUBBED_VARS = (
    "HIPPO_HOME",
    "HIPPO_SOCKET",
    "HIPPO_NO_SPAWN",
    "HIPPO_FAKE_NOW",
    "HIPPO_EMBEDDINGS",
    "HIPPO_TENANT",
    "HIPPO_SCOPE",
    "HIPPO_SESSION_ID",
    "HIPPO_LOG_LEVEL",
    "HIPPO_LOSS_AVERSION_RATIO",
    # A model API key in the test run's environment must not make daemons call the real API.
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GSTACK_SKILL",
    "OPENCLAW_SKILL",
    "NOTIFY_SOCKET",
    "LISTEN_PID",
    "LISTEN_FDS",
    # Agent tools' homes: a test daemon's watcher must never read the machine's own notes.
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "HIPPO_AGENT_MEMORY_TOOLS",
)
# Recording stand-ins for systemctl, launchctl and schtasks, first on every test process's PATH.
FAKEBIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fakebin")
START_TIMEOUT = 20.0
STOP_TIMEOUT = 20.0


# --- process helpers ----------------------------------------------------------------------------------


def pid_alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return fields[0] != "Z"


def parent_pid(pid: int) -> int | None:
    """The parent of a live process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return None


def niceness(pid: int, thread: int | None = None) -> int:
    """The niceness of a process, or of one of its threads (field 19 of proc(5))."""
    path = f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat"
    with open(path, encoding="ascii", errors="replace") as handle:
        # Counted after the command's closing parenthesis, which ends field 2.
        return int(handle.read().rsplit(")", 1)[1].split()[16])


def thread_niceness(pid: int) -> list[int]:
    """The niceness of each thread of a live process."""
    found = []
    for name in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            found.append(niceness(pid, int(name)))
    return found


def proc_env(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def _is_our_daemon(pid: int, home: str, user_home: str) -> bool:
    """A hippod of this instance: one on its HIPPO_HOME, or one on the default home of its HOME."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if b"hippod" not in cmdline:
        return False
    env = proc_env(pid)
    if "HIPPO_HOME" in env:
        return env["HIPPO_HOME"] == home
    return env.get("HOME") == user_home


def _kill(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def terminate_pid(pid: int, timeout: float = 10.0) -> None:
    """SIGCONT + SIGTERM, then SIGKILL if the process is still there after `timeout`."""
    _kill(pid, signal.SIGCONT)
    _kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid_alive(pid):
        _kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)


def wait_for(predicate: Any, timeout: float, interval: float = 0.05) -> bool:
    """Poll until predicate() is truthy; False on timeout (never an assertion about speed)."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


# --- the hippo fixture --------------------------------------------------------------------------------


class Hippo:
    """One isolated hippo instance: HIPPO_HOME, HIPPO_SOCKET and XDG folders under a short /tmp path."""

    def __init__(self, root: str, embeddings: bool = False) -> None:
        self.root = root
        self.home = os.path.join(root, "home")
        self.socket = os.path.join(root, "d.sock")
        self.runtime = os.path.join(root, "rt")
        os.makedirs(self.runtime, mode=0o700)
        os.chmod(self.runtime, 0o700)
        # HOME is the instance's own, so agent tools' default homes (~/.claude, ~/.codex, ...) are
        # empty temp folders; git still needs an identity there.
        self.user_home = os.path.join(root, "u")
        os.makedirs(self.user_home)
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_VARS}
        env.update(
            HIPPO_HOME=self.home,
            HIPPO_SOCKET=self.socket,
            XDG_RUNTIME_DIR=self.runtime,
            XDG_DATA_HOME=os.path.join(root, "data"),
            XDG_STATE_HOME=os.path.join(root, "state"),
            XDG_CACHE_HOME=os.path.join(root, "cache"),
            XDG_CONFIG_HOME=os.path.join(root, "config"),
            HOME=self.user_home,
            GIT_AUTHOR_NAME="hippo test",
            GIT_AUTHOR_EMAIL="test@hippo.invalid",
            GIT_COMMITTER_NAME="hippo test",
            GIT_COMMITTER_EMAIL="test@hippo.invalid",
            PYTHONDONTWRITEBYTECODE="1",
            PYTHONFAULTHANDLER="1",  # a daemon that will not stop shows its stacks (stop())
            PATH=FAKEBIN + os.pathsep + os.environ.get("PATH", ""),
            FAKEBIN_LOG=os.path.join(root, "fakebin.log"),
            FAKEBIN_STATE=os.path.join(root, "fakebin-state"),
        )
        if not embeddings:
            # Like a plain `pip install .`, daemons recall by BM25 alone and load no model; tests of
            # hybrid recall ask for the model with @pytest.mark.embeddings.
            env["HIPPO_EMBEDDINGS"] = "off"
        elif "XDG_CACHE_HOME" in os.environ:
            # The model's int8 graph is built once into the cache (embed/minilm_model.py): the test
            # session's cache, shared by its daemons, so each does not build it again.
            env["XDG_CACHE_HOME"] = os.environ["XDG_CACHE_HOME"]
        self.env: dict[str, str] = env
        self.proc: subprocess.Popen[str] | None = None
        self.procs: list[subprocess.Popen[str]] = []
        self._outputs = 0

    # paths
    @property
    def db(self) -> str:
        return os.path.join(self.home, "hippo.db")

    @property
    def lock(self) -> str:
        return self.socket + ".lock"

    def service_calls(self) -> list[str]:
        """The service-manager commands (systemctl, launchctl, schtasks) run so far, one per line."""
        try:
            with open(self.env["FAKEBIN_LOG"], encoding="utf-8") as handle:
                return handle.read().splitlines()
        except FileNotFoundError:
            return []

    def service_manager(self, *, reachable: bool = True, **units: str) -> None:
        """Set what the stand-in service managers answer from now on: unreachable (systemctl as
        without a user bus), or a unit's state, e.g. `hippod_service_active="failed"`."""
        folder = Path(self.env["FAKEBIN_STATE"])
        folder.mkdir(exist_ok=True)
        marker = folder / "unreachable"
        if reachable:
            marker.unlink(missing_ok=True)
        else:
            marker.touch()
        for key, value in units.items():
            unit, _, what = key.rpartition("_")
            (folder / f"{unit.replace('_', '.')}.{what}").write_text(value + "\n")

    @property
    def log(self) -> str:
        return os.path.join(self.home, "logs", "hippod.log")

    def daemon_env(self, **extra: str | None) -> dict[str, str]:
        env = dict(self.env)
        for key, value in extra.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    # daemon
    def spawn(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        command: str = "run",
        wrap: tuple[str, ...] = (),
    ) -> subprocess.Popen[str]:
        """Popen `python -m hippod run` (or another `command`, e.g. serve), output to files in the
        instance folder; no waiting. `wrap` goes before it (a tracer that runs the daemon as its child)."""
        self._outputs += 1
        out = open(os.path.join(self.root, f"daemon{self._outputs}.out"), "w+", encoding="utf-8")  # noqa: SIM115
        err = open(os.path.join(self.root, f"daemon{self._outputs}.err"), "w+", encoding="utf-8")  # noqa: SIM115
        proc = subprocess.Popen(
            [*wrap, sys.executable, "-m", "hippod", command, *args],
            env=self.env if env is None else env,
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            text=True,
        )
        proc.out_file = out  # type: ignore[attr-defined]
        proc.err_file = err  # type: ignore[attr-defined]
        self.procs.append(proc)
        return proc

    @staticmethod
    def output(proc: subprocess.Popen[str]) -> tuple[str, str]:
        """(stdout, stderr) a spawned daemon has written so far."""
        texts = []
        for handle in (proc.out_file, proc.err_file):  # type: ignore[attr-defined]
            handle.flush()
            handle.seek(0)
            texts.append(handle.read())
        return texts[0], texts[1]

    def answers(self, socket_path: str | None = None, env_home: str | None = None) -> int | None:
        """The pid of a daemon answering Hello on the socket, else None."""
        try:
            with RawConn(socket_path or self.socket, env_home or self.home, timeout=1.0) as conn:
                reply = conn.hello()
        except OSError:
            return None
        return reply.pid if isinstance(reply, m.Welcome) else None

    def start(
        self,
        *,
        env: dict[str, str] | None = None,
        fake_now: str | None = None,
        socket_path: str | None = None,
        serve: tuple[str, ...] | None = None,
        wrap: tuple[str, ...] = (),
    ) -> int:
        """Start a daemon (clock fixed at `fake_now` if given) and wait until it answers; returns its pid.

        With `serve`, the daemon is a team server: `hippod serve` with those arguments. With `wrap`
        (see spawn) the daemon is the wrapper's child, and `self.proc` the wrapper.
        """
        if fake_now is not None:
            env = dict(self.env if env is None else env, HIPPO_FAKE_NOW=fake_now)
        if serve is None:
            proc = self.spawn(env=env, wrap=wrap)
        else:
            proc = self.spawn(*serve, env=env, command="serve", wrap=wrap)
        self.proc = proc
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            pid = self.answers(socket_path)
            if pid is not None and (pid == proc.pid or (wrap and parent_pid(pid) == proc.pid)):
                return pid
            if proc.poll() is not None:
                out, err = self.output(proc)
                raise AssertionError(f"hippod exited with {proc.returncode}: {out!r} {err!r}")
            time.sleep(0.05)
        raise AssertionError(f"hippod did not answer within {START_TIMEOUT} s: {self.output(proc)}")

    def stop(self, proc: subprocess.Popen[str] | None = None, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM the daemon and wait for it; returns its exit code."""
        proc = proc or self.proc
        assert proc is not None, "no daemon was started"
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # SIGABRT first: faulthandler (PYTHONFAULTHANDLER) prints every thread's stack, which
            # names what held the stop.
            proc.send_signal(signal.SIGABRT)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
            stacks = self.output(proc)[1][-6000:]
            raise AssertionError(
                f"hippod did not stop within {timeout} s after SIGTERM\n{stacks}\n{self._log_tail()}"
            ) from None

    def _log_tail(self) -> str:
        """The end of the daemon's log, for a failure's message."""
        try:
            with open(self.log, encoding="utf-8", errors="replace") as handle:
                return handle.read()[-3000:]
        except OSError:
            return "(no log)"

    def kill(self, proc: subprocess.Popen[str] | None = None) -> None:
        proc = proc or self.proc
        assert proc is not None
        proc.kill()
        proc.wait(timeout=10)

    # client
    def ctl(
        self,
        *args: str,
        cwd: str | None = None,
        input: str | None = None,
        timeout: float = 30,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run `python -m hippoctl <args>` to completion with text output."""
        return subprocess.run(
            [sys.executable, "-m", "hippoctl", *args],
            cwd=cwd or self.root,
            input=input,
            env=self.env if env is None else env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def ok(
        self, *args: str, cwd: str | None = None, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """ctl() that must exit 0."""
        done = self.ctl(*args, cwd=cwd, input=input)
        assert done.returncode == 0, f"hippoctl {args} exited {done.returncode}: {done.stderr!r}"
        return done

    def json(self, *args: str, cwd: str | None = None) -> Any:
        """`hippoctl --json <args>` that must exit 0, parsed."""
        return json.loads(self.ok("--json", *args, cwd=cwd).stdout)

    wait_for = staticmethod(wait_for)
    pid_alive = staticmethod(pid_alive)

    def raw(self, timeout: float = 10.0) -> RawConn:
        return RawConn(self.socket, self.home, timeout=timeout)

    # teardown
    def daemon_pids(self) -> set[int]:
        """Live daemons of this instance: our children, lock-file pids, any hippod using our home
        (HIPPO_HOME, or the default home under our HOME)."""
        pids = {p.pid for p in self.procs if p.poll() is None}
        for lock in (self.lock, *Path(self.runtime).glob("**/*.lock")):
            with contextlib.suppress(OSError, ValueError):
                for line in Path(lock).read_text().splitlines():
                    if line.startswith("pid "):
                        pids.add(int(line.split()[1]))
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                pids.add(int(entry))
        return {pid for pid in pids if pid != os.getpid() and _is_our_daemon(pid, self.home, self.user_home)}

    def cleanup(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                terminate_pid(proc.pid)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
        for pid in self.daemon_pids():
            terminate_pid(pid)
        for proc in self.procs:
            proc.out_file.close()  # type: ignore[attr-defined]
            proc.err_file.close()  # type: ignore[attr-defined]
