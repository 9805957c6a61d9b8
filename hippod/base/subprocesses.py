"""Running a program from the daemon without blocking its loop (git, the service managers): bounded
by a timeout, and never leaving a child behind when it runs too long or its caller is cancelled."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finished:
    """A program that ran to its end: its exit status and what it wrote."""

    returncode: int
    out: bytes
    err: bytes


async def start(
    argv: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None, stdin: bool = False
) -> asyncio.subprocess.Process:
    """Start `argv` with stdout and stderr piped, and stdin piped too with `stdin` (else closed).

    Raises OSError when the program cannot start. The caller reads the pipes and reaps the process.
    """
    return await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        creationflags=window_flags(),
    )


def window_flags() -> int:
    """The creation flags of a child: on Windows, no console window (the daemon runs under pythonw,
    and a console program would flash one)."""
    if sys.platform == "win32":
        return subprocess.CREATE_NO_WINDOW
    return 0


async def run(
    argv: Sequence[str],
    *,
    timeout: float,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> Finished:
    """Run `argv` to completion, both outputs captured; stdin gets `stdin`, or is closed.

    Raises OSError when the program cannot start (FileNotFoundError: it is not installed) and
    TimeoutError past `timeout`. On a timeout, or when the caller is cancelled, the process is
    killed and reaped before the exception goes on.
    """
    proc = await start(argv, cwd=cwd, env=env, stdin=stdin is not None)
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), timeout)
    except BaseException:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        raise
    return Finished(proc.returncode or 0, out, err)
