"""Where the daemon's socket, lock and log live, computed with the standard library only.

Client and daemon both call these functions, so they always agree on the socket path.
They follow platformdirs' rules for app "hippo" (a test holds them to it) without
importing platformdirs on the client's start-up path.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from typing import Any

APP = "hippo"
_MAX_SOCKET_PATH = 100


def home_override(env: Mapping[str, str] = os.environ) -> str | None:
    """The realpath of $HIPPO_HOME, or None when it is unset or blank."""
    value = env.get("HIPPO_HOME", "").strip()
    return os.path.realpath(os.path.expanduser(value)) if value else None


def _sha256(data: bytes) -> Any:
    """SHA-256 from CPython's own module where it has one: `hashlib` loads OpenSSL, ~2 ms of the
    client's start-up on every hook of a keyed instance."""
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]  # CPython 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found]  # CPython 3.11
        except ImportError:
            from hashlib import sha256
    return sha256(data)


def instance_key(env: Mapping[str, str] = os.environ) -> str:
    """`default`, or the first 12 hex of sha256(realpath of HIPPO_HOME) (daemon.md §2)."""
    home = home_override(env)
    if home is None:
        return "default"
    return str(_sha256(home.encode()).hexdigest()[:12])


def _private_dir_ok(path: str) -> bool:
    if sys.platform == "win32":
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0


def runtime_base() -> str:
    """platformdirs.user_runtime_dir("hippo") for this user, without platformdirs."""
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/TemporaryItems/" + APP)
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~/AppData/Local")
        return os.path.join(local, "Temp", APP)
    xdg = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if xdg and _private_dir_ok(xdg):
        return os.path.join(xdg, APP)
    run_user = f"/run/user/{os.getuid()}"
    if _private_dir_ok(run_user):
        return os.path.join(run_user, APP)
    tmp = os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(tmp, f"runtime-{os.getuid()}", APP)


def socket_file_name(key: str) -> str:
    """The socket's file name in the runtime dir for an instance key."""
    return "hippod.sock" if key == "default" else f"hippod-{key}.sock"


PIPE_PREFIX = "\\\\.\\pipe\\"


def _pipe_user(env: Mapping[str, str]) -> str:
    """This user's name as it may appear in a pipe's name (no backslash, lower case)."""
    user = env.get("USERNAME") or os.path.basename(os.path.expanduser("~")) or "user"
    return _safe_name(user.lower())


def _safe_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def pipe_name(key: str, env: Mapping[str, str] = os.environ) -> str:
    """The daemon's named pipe on Windows: `\\\\.\\pipe\\hippod-<user>-<instance key>`.

    The name only finds the daemon; what keeps it this user's is the pipe's DACL and the client's
    check of the serving process (winsec.py)."""
    return f"{PIPE_PREFIX}hippod-{_pipe_user(env)}-{key}"


def socket_path() -> str:
    """The socket the daemon binds and the client connects to; $HIPPO_SOCKET wins.

    On Windows it is a named pipe; HIPPO_SOCKET there names a pipe, with or without its prefix."""
    explicit = os.environ.get("HIPPO_SOCKET", "").strip()
    if sys.platform == "win32":
        if not explicit:
            return pipe_name(instance_key())
        return explicit if explicit.lower().startswith(PIPE_PREFIX) else PIPE_PREFIX + explicit
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    name = socket_file_name(instance_key())
    path = os.path.join(runtime_base(), name)
    if len(path.encode()) > _MAX_SOCKET_PATH:
        # Unix socket paths are capped at 104-108 bytes; fall back to a short private folder.
        path = os.path.join(f"/tmp/hippo-{os.getuid()}", name)
    return path


def lock_path(sock: str) -> str:
    """The single-instance lock file sits next to the socket; a pipe's, in the runtime folder."""
    if sys.platform == "win32" and sock.lower().startswith(PIPE_PREFIX):
        return os.path.join(runtime_base(), _safe_name(sock[len(PIPE_PREFIX) :]) + ".lock")
    return sock + ".lock"


def log_dir(env: Mapping[str, str] = os.environ) -> str:
    """Where hippod.log lives: platformdirs' user log dir, or <HIPPO_HOME>/logs for a keyed instance.

    A keyed instance (tests, alternate homes) logs inside its own home so that two
    daemons never rotate the same file.
    """
    home = home_override(env)
    if home is not None:
        return os.path.join(home, "logs")
    user = env.get("HOME") or os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(user, "Library", "Logs", APP)
    if sys.platform == "win32":
        local = env.get("LOCALAPPDATA") or os.path.join(env.get("USERPROFILE") or user, "AppData", "Local")
        return os.path.join(local, APP, "Logs")
    state = env.get("XDG_STATE_HOME", "").strip()
    if not state or not os.path.isabs(state):
        state = os.path.join(user, ".local", "state")
    return os.path.join(state, APP, "log")


def log_file(env: Mapping[str, str] = os.environ) -> str:
    """hippod.log itself, in `log_dir`: where the daemon writes and where failures point."""
    return os.path.join(log_dir(env), "hippod.log")
