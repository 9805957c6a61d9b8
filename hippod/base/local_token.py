"""The local token: a secret in a file only this user can read, which proves a caller of the HTTP API or
the dashboard is this user where the daemon cannot see who is calling (not Linux), or for a program
that runs as another user on purpose.

It sits beside the global store (`<HIPPO_HOME or the data dir>/http-token`, mode 0600), made by the
daemon when a listener first opens and kept across restarts; deleting the file makes a new one at
its next use. Sent as `Authorization: Bearer hl_...`, the SDK's `api_key`.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import stat

from hippoctl.protocol.files import replace

FILE_NAME = "http-token"
PREFIX = "hl_"
_SECRET_BYTES = 32


def path(global_root: str) -> str:
    """Where the token is kept for the store at `global_root`."""
    return os.path.join(global_root, FILE_NAME)


def looks_like(token: str) -> bool:
    """Whether a Bearer credential is meant as the local token rather than an API key."""
    return token.startswith(PREFIX)


def matches(given: str, token: str) -> bool:
    """Constant-time comparison, as for API keys."""
    return hmac.compare_digest(given.encode(), token.encode())


def _private(st: os.stat_result) -> bool:
    getuid = getattr(os, "getuid", None)
    mine = getuid is None or st.st_uid == getuid()
    return mine and stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) & 0o077 == 0


def _read(file: str) -> str | None:
    """The token in `file`, or None when it is missing, malformed, or readable by anyone else (a
    token others could read proves nothing, so it is replaced)."""
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, encoding="ascii", errors="replace") as handle:
        if not _private(os.fstat(fd)):
            return None
        token = handle.read(256).strip()
    return token if looks_like(token) and len(token) > len(PREFIX) + 16 else None


def ensure(global_root: str) -> str:
    """The local token, made (0600, written whole) when there is none yet. Of two made at once, the
    first to land is kept and the other caller reads it."""
    file = path(global_root)
    found = _read(file)
    if found is not None:
        return found
    token = PREFIX + secrets.token_urlsafe(_SECRET_BYTES)
    os.makedirs(global_root, exist_ok=True)
    temporary = f"{file}.{secrets.token_hex(4)}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(token + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        if os.path.lexists(file):
            replace(temporary, file)  # one that proves nothing (see _read) gives way
        else:
            try:
                os.link(temporary, file)  # never over another's new token
            except FileExistsError:
                return _read(file) or ensure(global_root)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return token


class LocalToken:
    """The local token as its file holds it now, for a listener that runs for days: read again when
    the file changes, made again when it is deleted (so deleting it puts a new one in force at once)."""

    def __init__(self, global_root: str) -> None:
        self.global_root = global_root
        self.file = path(global_root)
        self._token = ""
        self._seen: tuple[int, int, int] | None = None

    def _identity(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.file)
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def current(self) -> str:
        seen = self._identity()
        if seen is None or seen != self._seen:
            self._token = ensure(self.global_root)
            self._seen = self._identity()
        return self._token

    def matches(self, given: str) -> bool:
        return matches(given, self.current())
