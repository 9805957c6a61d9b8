"""Claiming the home at start (daemon.md §3): one daemon per home, whatever socket it serves.

The daemon takes the home's lock (`<home>/hippod.lock`) first, then the socket's (`<socket>.lock`,
so that two homes sharing one HIPPO_SOCKET cannot unlink each other's socket), and then writes the
record that names it (hippoctl/protocol/instance.py). A lock that is busy names the daemon holding
it: the one answering on the socket the record names (the home), or on the socket (the socket).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from hippoctl.protocol import instance, paths
from hippoctl.protocol.files import write_private
from hippod import __version__
from hippod.daemon.lock import InstanceLock, LockFileError, lock_info
from hippod.daemon.probe import ping

log = logging.getLogger("hippod")

LOCK_WAIT_SECONDS = 5.0
LOCK_PROBE_SECONDS = 0.25


class Unresponsive(Exception):
    """A lock is held, and no daemon answers for it within LOCK_WAIT_SECONDS."""


@dataclass(frozen=True)
class Other:
    """The daemon that already serves this home (or this socket)."""

    pid: int
    socket: str


class Claim:
    """The home's lock, the socket's lock and the record, held for the daemon's whole life."""

    def __init__(self, home: str, home_lock: InstanceLock, socket_lock: InstanceLock) -> None:
        self.home = home
        self.home_lock = home_lock
        self.socket_lock = socket_lock

    def record(self, sock: str) -> None:
        """Write (or rewrite) the record naming this daemon and the socket it serves."""
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        entry = instance.Running(pid=os.getpid(), socket=sock, started_at=started, version=__version__)
        write_record(self.home, entry)

    def release(self) -> None:
        """The record goes first, then the socket's lock, then the home's: a client waiting for the
        home's lock to be let go sees a daemon wholly gone."""
        try:
            # A client reading the record this instant keeps Windows from deleting it; the lock,
            # let go below, is what says no daemon holds the home.
            with contextlib.suppress(FileNotFoundError, PermissionError):
                os.unlink(instance.record_path(self.home))
        finally:
            try:
                self.socket_lock.release()
            finally:
                self.home_lock.release()


def write_record(home: str, entry: instance.Running) -> None:
    path = instance.record_path(home)
    try:
        write_private(path, instance.encode(entry), f"{path}.{os.getpid()}.tmp")
    except OSError as exc:
        # The lock still keeps a second daemon out; only clients on another socket miss this one.
        log.warning("could not write %s: %s", path, exc.strerror or exc)


def moved(home: str, sock: str) -> None:
    """This daemon serves `sock` after all (the socket systemd passed it): the record says so."""
    entry = instance.read_record(home)
    if entry is not None and entry.pid == os.getpid() and entry.socket != sock:
        write_record(home, instance.Running(entry.pid, sock, entry.started_at, entry.version))


def _take(lock: InstanceLock, holder: Callable[[], Other | None]) -> Other | None:
    """Take `lock`; when another process holds it, the daemon `holder` finds answering for it.

    The holder may be starting, or just exiting: it is probed every LOCK_PROBE_SECONDS for up to
    LOCK_WAIT_SECONDS, the lock tried again in between. Raises Unresponsive after that.
    """
    info = lock_info(os.getpid(), __version__)
    if lock.try_acquire(info):
        return None
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        found = holder()
        if found is not None:
            return found
        if lock.try_acquire(info):
            return None
        if time.monotonic() >= deadline:
            raise Unresponsive("lock held by unresponsive process")
        time.sleep(LOCK_PROBE_SECONDS)


def answering(home: str) -> Other | None:
    """The daemon that holds `home` and answers on the socket its record names."""
    entry = instance.running(home)
    if entry is None:
        return None
    pid = ping(entry.socket, timeout=LOCK_PROBE_SECONDS)
    return Other(pid, entry.socket) if pid is not None else None


def _answering_on(sock: str) -> Other | None:
    pid = ping(sock, timeout=LOCK_PROBE_SECONDS)
    return Other(pid, sock) if pid is not None else None


def claim(home: str, sock: str) -> Claim | Other:
    """Take the home and the socket for this daemon, or name the daemon that has one of them.

    Raises LockFileError for a lock path holding something else than a lock file, and Unresponsive.
    """
    try:
        os.makedirs(home, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise LockFileError(f"cannot create the home {home}: {exc.strerror or exc}") from None
    home_lock = InstanceLock(instance.lock_path(home))
    other = _take(home_lock, lambda: answering(home))
    if other is not None:
        return other
    socket_lock = InstanceLock(paths.lock_path(sock))
    try:
        other = _take(socket_lock, lambda: _answering_on(sock))
    except BaseException:
        home_lock.release()
        raise
    if other is not None:
        home_lock.release()
        return other
    held = Claim(home, home_lock, socket_lock)
    held.record(sock)
    return held
