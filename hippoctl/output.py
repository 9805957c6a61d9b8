"""What the client writes to stdout for a reply: the reply's data as one JSON document."""

from __future__ import annotations

import sys
from typing import Any

import msgspec


def print_json(data: Any) -> None:
    """One JSON document on stdout: a reply's data, {} when it has none."""
    sys.stdout.write(msgspec.json.encode(data if data is not None else {}).decode() + "\n")
