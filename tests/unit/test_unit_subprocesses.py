"""hippod/base/subprocesses.py: a program run from the daemon ends within its timeout, leaving no child."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from hippod.base import subprocesses


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def test_output_and_exit_status_come_back() -> None:
    done = await subprocesses.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10)
    assert (done.returncode, done.out, done.err) == (3, b"out\n", b"err\n")


async def test_a_missing_program_raises_file_not_found() -> None:
    with pytest.raises(FileNotFoundError):
        await subprocesses.run(["hippo-no-such-program"], timeout=10)


async def _pid_of(path: Path) -> int:
    for _ in range(200):
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        await asyncio.sleep(0.01)
    raise AssertionError("the child never wrote its pid")


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
async def test_a_timeout_kills_the_child(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = f"echo $$ > {pidfile}; exec sleep 30"
    start = time.monotonic()
    with pytest.raises(TimeoutError):
        await subprocesses.run(["sh", "-c", script], timeout=0.5)
    assert time.monotonic() - start < 10
    assert not _alive(int(pidfile.read_text()))


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
async def test_a_cancelled_caller_kills_the_child(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = f"echo $$ > {pidfile}; exec sleep 30"
    task = asyncio.create_task(subprocesses.run(["sh", "-c", script], timeout=60))
    pid = await _pid_of(pidfile)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _alive(pid)
