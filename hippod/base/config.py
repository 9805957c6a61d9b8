"""daemon.json: the daemon's own settings, read once at start (daemon.md §2)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from hippod.base.daily_time import parse_daily_time
from hippod.base.jsonfile import merge, read_object

DAEMON_DEFAULTS: dict[str, Any] = {
    # catchUpDelaySeconds (our addition): how long after startup a missed run catches up (sleep.md §10.3).
    "daily": {"enabled": True, "time": "06:15", "days": 1, "catchUpDelaySeconds": 120},
    "watch": {"enabled": True, "debounceMs": 1600, "rescanSeconds": 60},
    # The HTTP listeners (the API and the dashboard) close a connection that has not sent its request
    # headers within headerTimeoutSeconds, its body within bodyTimeoutSeconds of them, or another
    # request within keepAliveSeconds of an answer; they hold at most maxConnections at once, fewer
    # if the open-file limit calls for it (hippod/web/connections.py).
    "http": {
        "autostart": False,
        "host": "127.0.0.1",
        "port": 6789,
        # Listen beyond loopback, as `serve --allow-remote` does (which also turns the keyless path off).
        "allowRemote": False,
        "headerTimeoutSeconds": 10,
        "bodyTimeoutSeconds": 30,
        "keepAliveSeconds": 5,
        "maxConnections": 1000,
    },
    "dashboard": {"port": 3333},
    # A team server's database (`hippod serve --team`, docs/team.md); poolMax: connections per server;
    # waitSeconds: how long a request waits for a connection before answering 503 team_unreachable.
    "team": {"dsn": None, "poolMax": 10, "waitSeconds": 30},
    "maxFrameBytes": 16 * 1024 * 1024,
    "shutdownGraceSeconds": 30,
    "storeIdleCloseMinutes": 15,
    "idleExitMinutes": 0,
    "cardReclaimMinutes": 15,
    "jobConcurrency": 2,
    "log": {"level": "info", "maxBytes": 5 * 1024 * 1024, "backups": 3},
}

# Numeric settings the daemon uses now, with the smallest value that makes sense.
_NUMBERS: tuple[tuple[tuple[str, ...], float], ...] = (
    (("maxFrameBytes",), 1024),
    (("shutdownGraceSeconds",), 0),
    (("jobConcurrency",), 1),
    (("storeIdleCloseMinutes",), 0),
    (("cardReclaimMinutes",), 0),  # 0: never from the schedule (`card reclaim` still works)
    (("log", "maxBytes"), 1024),
    (("log", "backups"), 0),
    (("daily", "days"), 1),
    (("daily", "catchUpDelaySeconds"), 0),
    (("watch", "debounceMs"), 0),
    (("watch", "rescanSeconds"), 0.1),
    (("team", "poolMax"), 1),
    (("team", "waitSeconds"), 0.1),
    (("http", "headerTimeoutSeconds"), 1),
    (("http", "bodyTimeoutSeconds"), 1),
    (("http", "keepAliveSeconds"), 1),
    (("http", "maxConnections"), 1),
)
LOG_LEVELS = ("debug", "info", "warning")


@dataclass
class DaemonConfig:
    """daemon.json as the daemon uses it: `values` (the defaults where the file says nothing usable),
    a warning per unusable value, and why the file could not be used at all (`unreadable`, e.g. a
    parse error; every value is then the default)."""

    values: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    unreadable: str | None = None

    def notice(self) -> str | None:
        """The line every client is told while daemon.json cannot be used, or None."""
        if self.unreadable is None:
            return None
        return f"{self.unreadable}: hippod runs on its defaults until it is fixed and hippod restarted"


def load_daemon_config(global_root: str) -> DaemonConfig:
    """daemon.json over the defaults, with any unusable value put back to its default. The caller
    logs what went wrong once logging is set up."""
    path = os.path.join(global_root, "daemon.json")
    overrides, unreadable = read_object(path)
    config = merge(DAEMON_DEFAULTS, overrides)
    warnings: list[str] = []
    for key, default_value in DAEMON_DEFAULTS.items():
        if isinstance(default_value, dict) and not isinstance(config[key], dict):
            warnings.append(f"{path}: {key} must be an object; using the default")
            config[key] = dict(default_value)
    for keys, smallest in _NUMBERS:
        holder, default = config, DAEMON_DEFAULTS
        for key in keys[:-1]:
            holder, default = holder[key], default[key]
        value = holder[keys[-1]]
        if isinstance(value, bool) or not isinstance(value, int | float) or value < smallest:
            warnings.append(f"{path}: {'.'.join(keys)} must be a number >= {smallest:g}; using the default")
            holder[keys[-1]] = default[keys[-1]]
    if config["log"]["level"] not in LOG_LEVELS:
        warnings.append(f"{path}: log.level must be one of {', '.join(LOG_LEVELS)}; using info")
        config["log"]["level"] = "info"
    warnings += _check_daily(path, config["daily"])
    return DaemonConfig(config, warnings, unreadable)


def _check_daily(path: str, daily: dict[str, Any]) -> list[str]:
    """daily.enabled must be a boolean and daily.time a local HH:MM (or HH:MM:SS); else the default."""
    warnings = []
    if not isinstance(daily["enabled"], bool):
        warnings.append(f"{path}: daily.enabled must be true or false; using the default")
        daily["enabled"] = DAEMON_DEFAULTS["daily"]["enabled"]
    try:
        parse_daily_time(daily["time"])
    except ValueError as exc:
        warnings.append(f"{path}: daily.time: {exc}; using the default")
        daily["time"] = DAEMON_DEFAULTS["daily"]["time"]
    daily["days"] = int(daily["days"])
    return warnings
