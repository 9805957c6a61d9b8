"""daemon.json: the daemon's own settings, read once at start (daemon.md §2)."""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from hippod.store.config import merge

log = logging.getLogger("hippod.config")

DEFAULTS: dict[str, Any] = {
    "daily": {"enabled": True, "time": "06:15", "days": 1},
    "watch": {"enabled": True, "debounceMs": 1600, "rescanSeconds": 60},
    "http": {"autostart": False, "host": "127.0.0.1", "port": 6789},
    "dashboard": {"port": 3333},
    "maxFrameBytes": 16 * 1024 * 1024,
    "shutdownGraceSeconds": 30,
    "storeIdleCloseMinutes": 15,
    "idleExitMinutes": 0,
    "cardReclaimMinutes": 15,
    "jobConcurrency": 2,
    "log": {"level": "info", "maxBytes": 5 * 1024 * 1024, "backups": 3},
}


def load_json_object(path: str) -> dict[str, Any]:
    """A JSON object from path; a missing file is {}, bad JSON is {} with a logged warning."""
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        log.warning("%s is not valid JSON; using defaults", path)
        return {}
    if not isinstance(value, dict):
        log.warning("%s is not a JSON object; using defaults", path)
        return {}
    return value


def load_daemon_config(global_root: str) -> dict[str, Any]:
    return merge(DEFAULTS, load_json_object(os.path.join(global_root, "daemon.json")))
