"""What a SQLite error means for a store: a HippoError that names the file and the cause.

Two failures are the store's own rather than the request's, and each gets a code of its own:
a file SQLite cannot read as a database (`store_corrupt`) and a disk with no room for a write
(`disk_full`). Any other error is left as it is.
"""

from __future__ import annotations

import os
import shutil
import sqlite3

from hippod.base.errors import HippoError

CORRUPT = "store_corrupt"
DISK_FULL = "disk_full"
_CORRUPT_NAMES = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})
# Below this much free space on a store's disk a write is refused before it starts (db.py).
MIN_FREE_BYTES = 1024 * 1024


def _errorname(exc: sqlite3.Error) -> str:
    """The primary result code's name, e.g. SQLITE_FULL (extended codes share its prefix)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    parts = name.split("_")
    return "_".join(parts[:2])


def is_corrupt(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.DatabaseError) and _errorname(exc) in _CORRUPT_NAMES


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.Error) and _errorname(exc) == "SQLITE_FULL"


def corrupt(path: str, cause: str) -> HippoError:
    return HippoError(
        CORRUPT,
        f"store {path} is corrupt ({cause})",
        hint="hippoctl doctor",
        details={"store": path},
    )


def disk_full(path: str, cause: str) -> HippoError:
    return HippoError(
        DISK_FULL,
        f"store {path}: the disk is full ({cause}); nothing was written",
        hint=f"free space on the disk holding {os.path.dirname(path)}, then try again",
        details={"store": path},
    )


def free_bytes(path: str) -> int | None:
    """Free space on the disk holding the file at `path`; None when it cannot be told."""
    try:
        return shutil.disk_usage(os.path.dirname(path)).free
    except OSError:
        return None


def named(path: str, exc: BaseException) -> HippoError | None:
    """The HippoError for a corrupt store or a full disk; None for any other error.

    Opening a WAL database needs room for its index (-shm) and log (-wal); SQLite reports a failure
    to make them as a disk I/O error, which on a disk without room is the full disk.
    """
    if is_corrupt(exc):
        return corrupt(path, str(exc))
    if is_disk_full(exc):
        return disk_full(path, str(exc))
    if isinstance(exc, sqlite3.Error) and _errorname(exc) == "SQLITE_IOERR":
        free = free_bytes(path)
        if free is not None and free < MIN_FREE_BYTES:
            return disk_full(path, f"{exc}; {free // 1024} KiB free")
    return None
