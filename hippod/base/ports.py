"""Port numbers as requests and settings give them, for the daemon's HTTP and dashboard listeners."""

from __future__ import annotations

import os
from typing import Any

from hippod.base.errors import HippoError

# The HTTP API's port when neither `serve --port`, HIPPO_PORT nor daemon.json names one.
DEFAULT_PORT = 6789


def first_port(*values: Any, default: int) -> int:
    """The first of `values` that is a port number (0 to 65535), else `default`."""
    for value in values:
        if value is None or value == "":
            continue
        try:
            port = int(value)
        except (TypeError, ValueError):
            continue
        if 0 <= port <= 65535:
            return port
    return default


def check_port(port: int | None) -> None:
    """A port a request names is 0 (any free one) to 65535."""
    if port is not None and not 0 <= port <= 65535:
        raise HippoError("usage", "--port must be 0 to 65535")


def port_setting(http: dict[str, Any]) -> int:
    """The listener's port when `serve` names none: HIPPO_PORT, else daemon.json http.port, else 6789."""
    return first_port(os.environ.get("HIPPO_PORT"), http.get("port"), default=DEFAULT_PORT)
