"""A daemon with hundreds of clients connecting at once answers them all; none is told it is down."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections import Counter
from typing import TYPE_CHECKING

import pytest

from e2e.harness import wait_for

if TYPE_CHECKING:
    from e2e.harness import Hippo

CLIENTS = 300
# Clients loading at once: starting all 300 together would starve every other test on the machine.
LOADING = 2


def blocked_on_stdin(pid: int) -> bool:
    """True once the process sleeps (the hook waits for its stdin, having loaded everything)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state == "S"


@pytest.mark.long
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads process states from /proc")
def test_simultaneous_calls_all_succeed(hippo: Hippo) -> None:
    """300 per-prompt hooks released together: each gets its reply; none is told hippod is not running."""
    hippo.start()
    hippo.ok("remember", "--pin", "Quokkas keep the burrow tidy")
    daemon = hippo.proc
    assert daemon is not None
    # The hook's own budget is made generous: what is under test is the connect, not the clock.
    # Without spawning, a client that took the busy daemon for a dead one says so instead of hiding it.
    env = dict(hippo.env, HIPPO_HOOK_TIMEOUT_MS="600000", HIPPO_NO_SPAWN="1")
    out_dir = os.path.join(hippo.root, "clients")
    os.makedirs(out_dir)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for n in range(CLIENTS):
            with (
                open(os.path.join(out_dir, f"{n}.out"), "wb") as out,
                open(os.path.join(out_dir, f"{n}.err"), "wb") as err,
            ):
                if n >= LOADING:
                    earlier = procs[n - LOADING]
                    assert wait_for(lambda p=earlier: blocked_on_stdin(p.pid), timeout=600, interval=0.05)
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "hippoctl", "context", "--pinned-only", "--strict"],
                        env=env,
                        cwd=hippo.root,
                        stdin=subprocess.PIPE,
                        stdout=out,
                        stderr=err,
                    )
                )
        # Every client is loaded and waiting on its stdin; then all are let go at once.
        assert wait_for(lambda: all(blocked_on_stdin(p.pid) for p in procs), timeout=600, interval=0.2)
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(b"{}")
            proc.stdin.close()
        codes = [proc.wait(timeout=600) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    failures = []
    for n, code in enumerate(codes):
        with open(os.path.join(out_dir, f"{n}.out"), "rb") as handle:
            out = handle.read().decode()
        with open(os.path.join(out_dir, f"{n}.err"), "rb") as handle:
            err = handle.read().decode()
        if code != 0 or "Quokkas keep the burrow tidy" not in out:
            failures.append((code, err.strip()))
    kinds = Counter(f"exit {code}: {err}" for code, err in failures)
    assert not failures, f"{len(failures)} of {CLIENTS} failed: {dict(kinds)}"
    assert daemon.poll() is None
    assert hippo.answers() == daemon.pid


def test_a_held_lock_is_never_taken_for_a_dead_daemon(hippo: Hippo) -> None:
    """Nothing accepts on the socket but the lock is held, as by a daemon that is not listening yet:
    the client waits within its time, then says so; it does not call hippod down or start another."""
    fd = os.open(hippo.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        done = hippo.ctl("--timeout", "1", "status")
        hook = hippo.ctl(
            "session-end", "--strict", input="{}", env=dict(hippo.env, HIPPO_HOOK_TIMEOUT_MS="1000")
        )
    finally:
        os.close(fd)
    assert done.returncode == 3, done
    assert (
        done.stderr == f"hippoctl: hippod holds its lock but does not accept connections on {hippo.socket}\n"
    )
    assert hook.returncode == 3, hook
    assert "hippod holds its lock but does not accept connections" in hook.stderr
    assert "the request waits in" in hook.stderr
    assert not os.path.exists(hippo.socket)
    assert not os.path.exists(hippo.log)  # no daemon was started: it would have opened its log
