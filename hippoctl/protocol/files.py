"""Writing a file whole: a reader sees the old file or the new one, never a part of one."""

from __future__ import annotations

import contextlib
import os
import sys
import time

# Windows refuses to replace a file another process holds open without FILE_SHARE_DELETE (an editor,
# a virus scanner, the search indexer) until it lets go; as git and npm do there, try again a while.
REPLACE_PATIENCE = 2.0

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _create(temp: str) -> int:
    """A new file at `temp`, never one opened through a link planted there.

    A temp left by a write that was killed is removed first (unlinking a link removes only the link).
    """
    try:
        return os.open(temp, _CREATE, 0o600)
    except FileExistsError:
        os.unlink(temp)
        return os.open(temp, _CREATE, 0o600)


def replace(src: str, dst: str, *, src_dir_fd: int | None = None, dst_dir_fd: int | None = None) -> None:
    """os.replace, retried on Windows for up to REPLACE_PATIENCE seconds while `dst` is held open."""
    deadline = time.monotonic() + REPLACE_PATIENCE
    delay = 0.01
    folders = (
        {}
        if src_dir_fd is None and dst_dir_fd is None
        else {"src_dir_fd": src_dir_fd, "dst_dir_fd": dst_dir_fd}
    )
    while True:
        try:
            os.replace(src, dst, **folders)
            return
        except PermissionError:
            if sys.platform != "win32" or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.25)


def write_private(path: str, data: bytes, temp: str, mode: int | None = None) -> None:
    """Write `data` to `temp` (0600, or `mode` when given), flush it to disk, then rename it over
    `path`; no temp is left behind."""
    fd = _create(temp)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
