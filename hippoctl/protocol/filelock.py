"""An exclusive lock on an open file that ends with its process: flock on POSIX, a locked byte on Windows.

The daemon holds two for its life (the home's, the socket's); clients only ask whether one is held.
On Windows the locked byte lies far past the file's text, so the pid and version written in the
file stay readable while it is held. Standard library only.
"""

from __future__ import annotations

import os
import sys

_WINDOWS_OFFSET = 1 << 30


def _windows_byte(fd: int, lock: bool) -> bool:
    """Lock (without waiting) or unlock the lock byte; False when another process holds it."""
    if sys.platform != "win32":
        raise OSError("msvcrt's locks are Windows's")
    import msvcrt

    os.lseek(fd, _WINDOWS_OFFSET, os.SEEK_SET)
    try:
        msvcrt.locking(fd, msvcrt.LK_NBLCK if lock else msvcrt.LK_UNLCK, 1)
    except OSError:
        return False
    finally:
        os.lseek(fd, 0, os.SEEK_SET)
    return True


def try_exclusive(fd: int) -> bool:
    """Take the exclusive lock without waiting; False when another process holds it."""
    if sys.platform == "win32":
        return _windows_byte(fd, lock=True)
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def held(fd: int) -> bool:
    """Whether another process holds the lock on this file. Raises OSError when it cannot tell."""
    if sys.platform == "win32":
        if not _windows_byte(fd, lock=True):
            return True
        _windows_byte(fd, lock=False)
        return False
    import fcntl

    try:
        # A shared lock is refused while the daemon holds its exclusive one; it goes with the fd.
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    return False
