"""Running hippoctl with its output on a pseudo-terminal, as a user's shell does."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time

READ_TIMEOUT = 60.0
ROWS = 40


def run_on_tty(args: list[str], *, env: dict[str, str], cwd: str) -> tuple[int, str]:
    """`python -m hippoctl <args>` with a terminal for stdout and stderr: (exit code, what it showed)."""
    code, _, shown = _run(args, env=env, cwd=cwd, pipe_stdout=False, columns=None, timeout=READ_TIMEOUT)
    return code, shown


def run_with_stderr_on_tty(
    args: list[str], *, env: dict[str, str], cwd: str, columns: int, timeout: float = READ_TIMEOUT
) -> tuple[int, str, str]:
    """`python -m hippoctl <args>` with a terminal `columns` wide for stderr and a pipe for stdout:
    (exit code, stdout, what the terminal showed)."""
    return _run(args, env=env, cwd=cwd, pipe_stdout=True, columns=columns, timeout=timeout)


def _run(
    args: list[str], *, env: dict[str, str], cwd: str, pipe_stdout: bool, columns: int | None, timeout: float
) -> tuple[int, str, str]:
    main, secondary = pty.openpty()
    if columns is not None:
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "hippoctl", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if pipe_stdout else secondary,
        stderr=secondary,
        env=env,
        cwd=cwd,
    )
    os.close(secondary)
    # Both streams are read as they come, so neither fills up and holds the command.
    out_fd = proc.stdout.fileno() if proc.stdout is not None else None
    read: dict[int, bytearray] = {main: bytearray()}
    if out_fd is not None:
        read[out_fd] = bytearray()
    still_open = set(read)
    deadline = time.monotonic() + timeout
    try:
        while still_open and time.monotonic() < deadline:
            ready, _, _ = select.select(sorted(still_open), [], [], 1.0)
            if not ready and proc.poll() is not None:
                break
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: every writer has closed the terminal
                    chunk = b""
                if chunk:
                    read[fd].extend(chunk)
                else:
                    still_open.discard(fd)
        code = proc.wait(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        os.close(main)
        if proc.stdout is not None:
            proc.stdout.close()
    out = read[out_fd].decode("utf-8", errors="replace") if out_fd is not None else ""
    return code, out, read[main].decode("utf-8", errors="replace")
