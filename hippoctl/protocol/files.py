"""Writing a file whole: a reader sees the old file or the new one, never a part of one."""

from __future__ import annotations

import contextlib
import os


def write_private(path: str, data: bytes, temp: str, mode: int | None = None) -> None:
    """Write `data` to `temp` (0600, or `mode` when given), flush it to disk, then rename it over
    `path`; no temp is left behind."""
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
