"""`doctor`'s daemon-side checks (integrations.md §12), strictly read-only.

Each check is a function that takes what it looks at (paths, parsed facts, an environment) and returns
`Check`s, so it can be tried alone on real files. Nothing here opens a store through the registry
(opening migrates) or writes to any file.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from hippoctl.protocol.replies_doctor import FAIL, OK, WARN, Check
from hippoctl.protocol.wording import plural

_RANK = {OK: 0, WARN: 1, FAIL: 2}


def hippoctl(*args: str, directory: str | None = None) -> str:
    """A hippoctl command line for a check's fix, run from `directory` (-C) when one is given."""
    words = ["hippoctl", *(["-C", directory] if directory is not None else []), *args]
    return shlex.join(words)


def worst(statuses: Iterable[str]) -> str:
    """The most serious of the statuses (ok < warn < fail); ok when there are none."""
    return max(statuses, key=lambda s: _RANK.get(s, 2), default=OK)


class Findings:
    """The problems one check found; becomes a single Check whose status is the worst of them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.items: list[tuple[str, str, str | None]] = []

    def add(self, status: str, message: str, fix: str | None = None) -> None:
        self.items.append((status, message, fix))

    def check(self, ok_message: str) -> Check:
        """The check: ok_message when nothing was found, else every message and the worst problem's fix."""
        if not self.items:
            return Check(self.name, OK, ok_message)
        status = worst(s for s, _, _ in self.items)
        message = "; ".join(m for _, m, _ in self.items)
        fix = next((f for s, _, f in self.items if s == status and f), None)
        return Check(self.name, status, message, fix)


def ago(seconds: float) -> str:
    """A past duration in words: `3 days`, `5 h`, `12 min`."""
    if seconds >= 2 * 86400:
        return plural(int(seconds // 86400), "day")
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h"
    return f"{max(0, int(seconds // 60))} min"
