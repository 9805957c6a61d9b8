"""Colour in what hippoctl prints: only on a terminal, and never with NO_COLOR set (https://no-color.org).

Every ANSI sequence the client writes comes from `paint`, so this one rule covers them all. A pipe, a
file, an agent's hook or `TERM=dumb` gets plain text; FORCE_COLOR is not honoured (colour stays a
terminal's).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

RED = "31"
GREEN = "32"
YELLOW = "33"
BOLD = "1"


def enabled(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Whether text written to `stream` may carry colour."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR", "") != "" or env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # closed, detached or not a real stream
        return False


def paint(text: str, code: str, on: bool) -> str:
    """`text` in the ANSI colour `code` when `on`, else unchanged."""
    return f"\x1b[{code}m{text}\x1b[0m" if on and code else text
