"""Reading the small JSON settings files hippod keeps (config.json, daemon.json)."""

from __future__ import annotations

import copy
import json
from typing import Any


def read_object(path: str) -> tuple[dict[str, Any], str | None]:
    """The JSON object in path, and a warning when it is unreadable; a missing file is {} silently."""
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError) as exc:
        return {}, f"{path} is unreadable ({exc.__class__.__name__}); using defaults"
    if not isinstance(value, dict):
        return {}, f"{path} is not a JSON object; using defaults"
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
