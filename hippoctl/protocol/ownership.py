"""Whose socket is this: checks that the socket's folders, and the process listening on it, are this user's.

Client and daemon both use them: the client before it sends anything, the daemon before it binds.
The rules follow OpenSSH's safe_path() and systemd's safe path walk: every folder from `/` down is
owned by this user or root and writable by no one else, except a folder with the sticky bit (`/tmp`),
where others can add names but not move or delete ours; the socket's own folder is this user's and
writable by no one else. Standard library only.
"""

from __future__ import annotations

import os
import socket
import stat
import sys

# As many symbolic links as Linux follows in one path.
MAX_LINKS = 40


class NotOurs(Exception):
    """A folder, link or process another user owns or could change; the message names it and its owner."""


def owner_name(uid: int) -> str:
    """`alice (uid 1000)`, or `uid 1000` when the user database has no such user."""
    if sys.platform == "win32":
        return f"uid {uid}"
    import pwd

    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _writable(path: str, st: os.stat_result) -> NotOurs:
    mode = stat.S_IMODE(st.st_mode)
    return NotOurs(f"{path} is writable by other users (mode {mode:o}, owner {owner_name(st.st_uid)})")


def _check_step(path: str, st: os.stat_result, uid: int) -> None:
    """A folder on the way down: this user's or root's, and writable by others only when sticky."""
    if st.st_uid not in (0, uid):
        raise NotOurs(f"{path} is owned by {owner_name(st.st_uid)}, not by {owner_name(uid)}")
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022 and not mode & stat.S_ISVTX:
        raise _writable(path, st)


def check_folder(folder: str, *, missing_ok: bool = False) -> None:
    """Raise NotOurs unless a socket in `folder` can only have been put there by this user (or root).

    The path is walked as the kernel walks it, with lstat: a symbolic link is followed only when this
    user or root owns it (it then sits in a folder already found safe). A missing part raises
    FileNotFoundError, or with `missing_ok` ends the walk with what exists found safe.
    """
    if sys.platform == "win32":
        return
    uid = os.getuid()
    pending = folder.split("/")[::-1]
    current = "/"
    _check_step(current, os.lstat(current), uid)
    links = 0
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            current = os.path.dirname(current)
            continue
        path = os.path.join(current, name)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            if missing_ok:
                return
            raise
        if stat.S_ISLNK(st.st_mode):
            if st.st_uid not in (0, uid):
                raise NotOurs(f"{path} is a symbolic link owned by {owner_name(st.st_uid)}")
            links += 1
            if links > MAX_LINKS:
                raise NotOurs(f"{path}: too many symbolic links")
            target = os.readlink(path)
            if target.startswith("/"):
                current = "/"
            pending.extend(target.split("/")[::-1])
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise NotOurs(f"{path} is not a folder")
        _check_step(path, st, uid)
        current = path
    st = os.lstat(current)
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid != uid:
        raise NotOurs(f"{current} is owned by {owner_name(st.st_uid)}, not by {owner_name(uid)}")
    if mode & 0o022:
        raise _writable(current, st)


def _field(raw: bytes, index: int) -> int:
    """The `index`th 32-bit unsigned field of a C struct (struct is not imported: the hook pays for it)."""
    return int.from_bytes(raw[4 * index : 4 * index + 4], sys.byteorder)


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a connected Unix socket.

    SO_PEERCRED on Linux and OpenBSD, LOCAL_PEERCRED (what getpeereid() reads) on macOS and FreeBSD;
    None on a platform with neither, where the folder check alone stands. Raises OSError when the
    platform has the call and it fails.
    """
    if sys.platform.startswith("linux"):
        # struct ucred {pid_t pid; uid_t uid; gid_t gid;}
        return _field(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12), 1)
    if sys.platform == "darwin" or sys.platform.startswith(("freebsd", "dragonfly")):
        # struct xucred {u_int cr_version; uid_t cr_uid; ...} at level SOL_LOCAL (0), LOCAL_PEERCRED (1).
        return _field(sock.getsockopt(0, getattr(socket, "LOCAL_PEERCRED", 1), 128), 1)
    if sys.platform.startswith("openbsd"):
        # struct sockpeercred {uid_t uid; gid_t gid; pid_t pid;}
        return _field(sock.getsockopt(socket.SOL_SOCKET, getattr(socket, "SO_PEERCRED", 0x1022), 12), 0)
    return None
