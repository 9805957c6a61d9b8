"""Writing other programs' files: atomically, with a one-time backup of the original."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import threading

BACKUP_SUFFIX = ".hippo-bak"


def read_text(path: str) -> str | None:
    """The file's text, or None when it does not exist."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def backup_once(path: str) -> str | None:
    """Copy `path` to `<path>.hippo-bak` unless that copy already exists; returns the backup's path.

    The first copy is the user's own file from before hippod touched it, so it is never replaced.
    """
    backup = path + BACKUP_SUFFIX
    if not os.path.exists(path) or os.path.exists(backup):
        return None
    shutil.copy2(path, backup)
    return backup


def write_atomic(path: str, text: str | bytes, *, mode: int | None = None, backup: bool = True) -> None:
    """Replace `path` with `text`: a reader sees the old file or the new one, never a half-written one.

    Text is written as UTF-8; bytes as they are (e.g. a UTF-16 file). An existing file keeps its
    permission bits (unless `mode` is given) and gets its one-time backup first. Parent folders are
    created as needed.
    """
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    try:
        old_mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        old_mode = None
    if backup and old_mode is not None:
        backup_once(path)
    temp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(temp, "wb") as handle:
            handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        chosen = mode if mode is not None else old_mode
        if chosen is not None:
            os.chmod(temp, chosen)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def remove(path: str) -> bool:
    """Delete `path` (backing it up first, once); False when it was not there."""
    if not os.path.exists(path):
        return False
    backup_once(path)
    os.unlink(path)
    return True
