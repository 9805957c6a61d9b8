"""`<global root>/integrations/installed.json`: one record per thing hippod installed (integrations.md).

Uninstall and `doctor` rely on it: a block is removed only where a record says this target put it,
and a service is uninstalled by removing exactly the files recorded for it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from collections.abc import Callable

import msgspec

from hippod.base import clock
from hippod.integrations.files import write_atomic

log = logging.getLogger("hippod.integrations")

# One lock for every read-modify-write of the file: handlers run concurrently in one process.
_LOCK = threading.Lock()


class Record(msgspec.Struct, omit_defaults=True):
    """One installed thing. kind: block | hook | plugin | service | wrapper."""

    target: str
    kind: str
    file: str
    installed_at: str = ""
    command: str | None = None
    digest: str | None = None


def path(global_root: str) -> str:
    return os.path.join(global_root, "integrations", "installed.json")


def load(global_root: str) -> list[Record]:
    """Every record; a missing or unreadable file reads as none (doctor reports the latter)."""
    try:
        with open(path(global_root), "rb") as handle:
            return msgspec.json.decode(handle.read(), type=list[Record])
    except (FileNotFoundError, msgspec.DecodeError, msgspec.ValidationError):
        return []


UNREADABLE_SUFFIX = ".unreadable"


def readable(global_root: str) -> bool:
    """False when installed.json exists but cannot be read as records (doctor reports it)."""
    try:
        with open(path(global_root), "rb") as handle:
            msgspec.json.decode(handle.read(), type=list[Record])
    except FileNotFoundError:
        return True
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return False
    return True


def _load_for_update(global_root: str) -> list[Record]:
    """The records before a change. An unreadable file is kept beside as `installed.json.unreadable`
    before a new one replaces it: its records may still be needed to uninstall by hand."""
    if readable(global_root):
        return load(global_root)
    target = path(global_root)
    shutil.copy2(target, target + UNREADABLE_SUFFIX)
    log.warning("%s is unreadable; kept it as %s and started a new one", target, target + UNREADABLE_SUFFIX)
    return []


def _save(global_root: str, records: list[Record]) -> None:
    data = [msgspec.to_builtins(r) for r in records]
    write_atomic(path(global_root), json.dumps(data, indent=2) + "\n", mode=0o600, backup=False)


def _key(record: Record) -> tuple[str, str, str, str | None]:
    return record.target, record.kind, record.file, record.command


def add(global_root: str, record: Record) -> None:
    """Record an installation, replacing a record for the same (target, kind, file, command).

    A record that says the same again is kept as it is, with its first installed_at, and the file is
    not rewritten: re-running an install changes nothing.
    """
    with _LOCK:
        records = _load_for_update(global_root)
        same = [r for r in records if _key(r) == _key(record)]
        if same and same[0].digest == record.digest and not record.installed_at:
            return
        if not record.installed_at:
            record.installed_at = clock.iso(clock.now())
        records = [r for r in records if _key(r) != _key(record)]
        records.append(record)
        _save(global_root, records)


def remove(global_root: str, match: Callable[[Record], bool]) -> int:
    """Drop the records `match` accepts; returns how many went."""
    with _LOCK:
        records = load(global_root)
        if not records:
            return 0  # nothing to drop; an unreadable file is left as it is
        kept = [r for r in records if not match(r)]
        if len(kept) != len(records):
            _save(global_root, kept)
        return len(records) - len(kept)
