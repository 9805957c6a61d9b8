"""`<global root>/daemon-state.json`: facts one daemon leaves for the next (daemon.md §2, sleep.md §10.3).

Several writers own different keys (the shutdown record, the daily run), so every write merges its
keys into what is there and replaces the file atomically.
"""

from __future__ import annotations

import os
from typing import Any

from hippod.base.jsonfile import read_object, write_object

FILE_NAME = "daemon-state.json"


def state_path(global_root: str) -> str:
    return os.path.join(global_root, FILE_NAME)


def read(global_root: str) -> tuple[dict[str, Any], str | None]:
    """The recorded facts and a warning when the file is unreadable (then {}); missing is {} silently."""
    return read_object(state_path(global_root))


def update(global_root: str, **fields: Any) -> None:
    """Merge fields into the file, written to a temporary name and renamed into place."""
    current, _ = read(global_root)
    current.update(fields)
    write_object(state_path(global_root), current)
