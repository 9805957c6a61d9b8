"""The small JSON files hippod keeps: reading settings (config.json, daemon.json) and writing state
(daemon-state.json, workspaces.json) atomically."""

from __future__ import annotations

import copy
import json
import os
import threading
from typing import Any

from hippoctl.protocol.files import write_private


def read_object(path: str) -> tuple[dict[str, Any], str | None]:
    """The JSON object in path, and what is wrong with the file when it cannot be used (then {}):
    the file named, and the parse error with its line and column. A missing file is {} silently."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, f"{path} cannot be read ({exc.strerror or exc.__class__.__name__})"
    try:
        value = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return {}, f"{path} is not UTF-8 text (byte {exc.start})"
    except ValueError as exc:
        return {}, f"{path} is not valid JSON ({exc})"
    if not isinstance(value, dict):
        return {}, f"{path} is not a JSON object"
    return value, None


def merge(defaults: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Overrides win key by key; for dict values, one level deeper."""
    merged = copy.deepcopy(defaults)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def write_object(path: str, value: dict[str, Any]) -> None:
    """Replace path with value as indented JSON: a reader sees the old file or the new one, never half.

    The temporary name is per thread, so two writers in one process never share it; the data is
    flushed to disk before the rename, so a crash cannot leave an empty file behind.
    """
    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    temp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    write_private(path, (json.dumps(value, indent=2) + "\n").encode("utf-8"), temp)
