"""The single-instance lock: an exclusive flock held for the daemon's whole life (daemon.md §3)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time


class InstanceLock:
    """An flock on `<socket>.lock`, written with our pid, start time and version."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None

    def try_acquire(self, info: str) -> bool:
        """Take the lock without blocking; False when another process holds it."""
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            # The holder we raced may have deleted the file on exit: make sure we locked the file
            # that is at the path now, not an unlinked one.
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
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
        """Delete the file, then drop the lock."""
        if self.fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        os.close(self.fd)
        self.fd = None


def lock_info(pid: int, version: str) -> str:
    return f"pid {pid}\nstarted {time.strftime('%Y-%m-%dT%H:%M:%S%z')}\nversion {version}\n"
