"""One daemon per home (daemon.md §3): the home's lock, and the record naming the daemon that holds it.

A daemon flocks `<home>/hippod.lock` for its whole life, and once it holds it writes
`<home>/hippod-running.json`: its pid, the socket it serves, when it started and its version
(replaced whole, 0600). A client whose own socket has no daemon reads the record to find the daemon
of its home on another socket (one started with another XDG_RUNTIME_DIR or HIPPO_SOCKET). The record
counts only while the lock is held. Client and daemon both read this module: standard library and
msgspec only.
"""

from __future__ import annotations

import os
import stat
import sys

import msgspec

from hippoctl.protocol import filelock

LOCK_NAME = "hippod.lock"
RECORD_NAME = "hippod-running.json"
_MAX_RECORD = 64 * 1024
_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class Running(msgspec.Struct, forbid_unknown_fields=False):
    """The daemon that holds a home: what its record says."""

    pid: int
    socket: str
    started_at: str
    version: str


def lock_path(home: str) -> str:
    return os.path.join(home, LOCK_NAME)


def record_path(home: str) -> str:
    return os.path.join(home, RECORD_NAME)


def encode(record: Running) -> bytes:
    return msgspec.json.encode(record) + b"\n"


def lock_held(path: str) -> bool:
    """Whether a live process holds the exclusive flock on the lock file at `path`.

    No file, or not one a daemon of ours would have made (a link, another user's file), means no:
    another user who can write the home must not make this user's clients wait for a daemon.
    """
    try:
        fd = os.open(path, _READ)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not owned_by_me(st):
            return False
        return filelock.held(fd)
    except OSError:
        return False
    finally:
        os.close(fd)


def owned_by_me(st: os.stat_result) -> bool:
    """Whether this user owns the file (on Windows the folder's ACL, not st_uid, says so)."""
    return sys.platform == "win32" or st.st_uid == os.getuid()


def read_record(home: str) -> Running | None:
    """The record in `home` when it is a regular file of this user's that parses, else None."""
    try:
        fd = os.open(record_path(home), _READ)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not owned_by_me(st) or st.st_size > _MAX_RECORD:
            return None
        data = os.read(fd, _MAX_RECORD + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        record = msgspec.json.decode(data, type=Running)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if not os.path.isabs(record.socket) or "\x00" in record.socket:
        return None
    return record


def running(home: str) -> Running | None:
    """The daemon that holds `home` now, as its record names it; None when no daemon holds it.

    In the instant between a daemon taking the lock and writing its record, this is the previous
    daemon's record or None: a caller waits on a socket that does not answer yet, as for a daemon
    that is starting.
    """
    if not lock_held(lock_path(home)):
        return None
    return read_record(home)
