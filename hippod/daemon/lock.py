"""The single-instance lock: an exclusive flock held for the daemon's whole life (daemon.md §3)."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time

from hippoctl.protocol import filelock
from hippoctl.protocol.instance import owned_by_me
from hippoctl.protocol.ownership import owner_name

# A lock file is opened only as itself: never through a symbolic link planted at its path.
_OPEN = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class LockFileError(Exception):
    """The lock path holds something no daemon of ours made (a link, a folder, another user's file)."""


def _open_lock(path: str) -> int:
    """The lock file's descriptor: the file that is there, or a new one made with O_EXCL."""
    while True:
        try:
            fd = os.open(path, _OPEN)
        except FileNotFoundError:
            try:
                return os.open(path, _OPEN | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue  # another daemon made it first: open that one
        except OSError as exc:
            if os.path.islink(path):
                raise LockFileError(f"lock file {path} is a symbolic link; remove it") from None
            raise LockFileError(f"cannot open lock file {path}: {exc.strerror or exc}") from None
        st = os.fstat(fd)
        problem = None
        if not stat.S_ISREG(st.st_mode):
            problem = "is not a regular file"
        elif not owned_by_me(st):
            problem = f"is owned by {owner_name(st.st_uid)}"
        elif st.st_nlink > 1:
            problem = "has other hard links"
        if problem is not None:
            os.close(fd)
            raise LockFileError(f"lock file {path} {problem}; remove it")
        return fd


class InstanceLock:
    """An flock on `<socket>.lock`, written with our pid, start time and version."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None

    def try_acquire(self, info: str) -> bool:
        """Take the lock without blocking; False when another process holds it.

        Raises LockFileError when the path holds something else than our lock file.
        """
        while True:
            fd = _open_lock(self.path)
            if not filelock.try_exclusive(fd):
                os.close(fd)
                return False
            # The holder we raced may have deleted the file on exit: make sure we locked the file
            # that is at the path now, not an unlinked one.
            try:
                same = os.fstat(fd).st_ino == os.lstat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, info.encode())
        self.fd = fd
        return True

    def release(self) -> None:
        """Delete the file, then drop the lock (on Windows the other way round: an open file cannot
        be deleted there, nor can one that the next daemon has opened meanwhile)."""
        if self.fd is None:
            return
        if sys.platform == "win32":
            os.close(self.fd)
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            os.close(self.fd)
        self.fd = None


def lock_info(pid: int, version: str) -> str:
    return f"pid {pid}\nstarted {time.strftime('%Y-%m-%dT%H:%M:%S%z')}\nversion {version}\n"
