"""Consolidations per SessionEnd, and daemons per home, when a hook runs without XDG_RUNTIME_DIR.

A daemon is started as a login session starts it: XDG_RUNTIME_DIR set, no HIPPO_HOME or
HIPPO_SOCKET, the default home under a fresh HOME. Then `session-end` runs `--runs` times in each of
two ways, each with a new Claude Code transcript, in a folder without a project store (so the
global store is slept):

- `XDG_RUNTIME_DIR set`: from the daemon's own environment;
- `env -i (no XDG_RUNTIME_DIR)`: as an agent host with a bare environment runs it,
  `env -i HOME=<home> TMPDIR=<sandbox>/tmp PATH=/usr/bin:/bin /bin/sh -c '<venv>/bin/hippoctl session-end'`
  (TMPDIR keeps the client's fallback socket folder inside the sandbox on a machine without
  /run/user/<uid>, where it would otherwise be /tmp/runtime-<uid>).

After each session end the bench waits until the spool holds no session-end file and the global
store's consolidation runs have not changed for --settle seconds (two daemons may both replay one
file), then counts what that session end added (`each`, in order). The last column counts the hippod processes
serving the home. A measuring tool, not a test: it prints a table and asserts nothing.

Usage: python bench/home_daemons.py [--runs 5] [--settle 4]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SCRIPT = os.path.join(os.path.dirname(sys.executable), "hippoctl")
BARE_PATH = "/usr/bin:/bin"
WAIT = 120.0


@dataclass(frozen=True, slots=True)
class Row:
    mode: str
    session_ends: int
    consolidations: int
    each: tuple[int, ...]
    daemons: int


class Sandbox:
    """A fresh HOME with its own runtime dir; the home is its default `~/.local/share/hippo`."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="hb", dir="/tmp"))
        self.home = self.root / "u"
        self.runtime = self.root / "rt"
        self.tmp = self.root / "tmp"
        for folder in (self.home, self.runtime, self.tmp, self.root / "bare"):
            folder.mkdir(mode=0o700)
        keep = ("LANG", "LC_ALL")
        self.env = {k: os.environ[k] for k in keep if k in os.environ}
        self.env.update(
            HOME=str(self.home),
            XDG_RUNTIME_DIR=str(self.runtime),
            PATH=os.pathsep.join([os.path.dirname(sys.executable), BARE_PATH]),
            HIPPO_EMBEDDINGS="off",
        )

    @property
    def db(self) -> Path:
        return self.home / ".local" / "share" / "hippo" / "hippo.db"

    @property
    def spool(self) -> Path:
        return self.home / ".local" / "share" / "hippo" / "spool" / "session-end"

    def daemons(self) -> list[int]:
        """hippod processes whose HOME is this sandbox's."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
                environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"hippod" in cmdline and f"HOME={self.home}".encode() in environ:
                found.append(int(entry))
        return sorted(found)

    def consolidations(self) -> int:
        if not self.db.exists():
            return 0
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        try:
            return int(conn.execute("SELECT count(*) FROM consolidation_runs").fetchone()[0])
        except sqlite3.OperationalError:
            return 0
        finally:
            conn.close()

    def close(self) -> None:
        for pid in self.daemons():
            with_signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while self.daemons() and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in self.daemons():
            with_signal(pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)


def with_signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def transcript(box: Sandbox, n: int) -> str:
    path = box.home / ".claude" / "projects" / "-bare" / f"bench-{n}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [
        {"type": "user", "message": {"role": "user", "content": f"Set up store {n}"}},
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def session_end(box: Sandbox, n: int, bare: bool) -> None:
    cwd = box.root / "bare"
    payload = {
        "session_id": f"bench-{n}",
        "transcript_path": transcript(box, n),
        "cwd": str(cwd),
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }
    if bare:
        line = (
            f"env -i HOME={shlex.quote(str(box.home))} TMPDIR={shlex.quote(str(box.tmp))} PATH={BARE_PATH} "
        )
        line += f"/bin/sh -c {shlex.quote(shlex.quote(SCRIPT) + ' session-end')}"
        argv, env = ["/bin/sh", "-c", line], {"PATH": BARE_PATH}
    else:
        argv, env = [SCRIPT, "session-end"], box.env
    done = subprocess.run(argv, env=env, cwd=cwd, input=json.dumps(payload), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"session-end exited {done.returncode}: {done.stderr}")


def settled(box: Sandbox, before: int, settle: float) -> int:
    """The consolidation count once the spool is empty and the count has held for `settle` s."""
    deadline = time.monotonic() + WAIT
    last, since = box.consolidations(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = box.consolidations()
        pending = list(box.spool.glob("*.json")) if box.spool.exists() else []
        if now != last:
            last, since = now, time.monotonic()
        elif now > before and not pending and time.monotonic() - since >= settle:
            return now
    raise SystemExit(f"no settled consolidation count within {WAIT:g} s")


def run(runs: int, settle: float) -> list[Row]:
    box = Sandbox()
    try:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "hippod", "run"],
            env=box.env,
            cwd=box.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        sock = box.runtime / "hippo" / "hippod.sock"
        deadline = time.monotonic() + WAIT
        while not sock.exists():
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the daemon did not start")
            time.sleep(0.05)
        rows = []
        n = 0
        for mode, bare in (("XDG_RUNTIME_DIR set", False), ("env -i (no XDG_RUNTIME_DIR)", True)):
            start = box.consolidations()
            each = []
            for _ in range(runs):
                n += 1
                before = box.consolidations()
                session_end(box, n, bare)
                each.append(settled(box, before, settle) - before)
            rows.append(Row(mode, runs, box.consolidations() - start, tuple(each), len(box.daemons())))
        return rows
    finally:
        box.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="session ends per mode")
    parser.add_argument("--settle", type=float, default=4.0, help="seconds the count must hold")
    args = parser.parse_args()
    rows = run(args.runs, args.settle)
    header = ("mode", "SessionEnds", "consolidations", "per SessionEnd", "each", "daemons for the home")
    table = [(r.mode, str(r.session_ends), str(r.consolidations), f"{r.consolidations / r.session_ends:.2f}",
              ",".join(map(str, r.each)), str(r.daemons)) for r in rows]  # fmt: skip
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for line in table:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)))


if __name__ == "__main__":
    main()
