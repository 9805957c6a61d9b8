"""Running hippoctl with its stdout and stderr on a pseudo-terminal, as a user's shell does."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import subprocess
import sys
import time

READ_TIMEOUT = 60.0


def run_on_tty(args: list[str], *, env: dict[str, str], cwd: str) -> tuple[int, str]:
    """`python -m hippoctl <args>` with a terminal for stdout and stderr: (exit code, what it showed)."""
    main, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hippoctl", *args],
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
        env=env,
        cwd=cwd,
    )
    os.close(secondary)
    chunks: list[bytes] = []
    deadline = time.monotonic() + READ_TIMEOUT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: every writer has closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = proc.wait(timeout=READ_TIMEOUT)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        os.close(main)
    return code, b"".join(chunks).decode("utf-8", errors="replace")
