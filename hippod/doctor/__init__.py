"""`doctor`'s daemon-side checks (integrations.md §12), strictly read-only.

Each check is a function that takes what it looks at (paths, parsed facts, an environment) and returns
`Check`s, so it can be tried alone on real files. Nothing here opens a store through the registry
(opening migrates) or writes to any file.
"""

from __future__ import annotations

import shlex

from hippoctl.protocol.replies_doctor import OK, Check
from hippoctl.protocol.wording import plural


def hippoctl(*args: str, directory: str | None = None) -> str:
    """A hippoctl command line for a check's fix, run from `directory` (-C) when one is given."""
    words = ["hippoctl", *(["-C", directory] if directory is not None else []), *args]
    return shlex.join(words)


class Findings:
    """The problems one check found, each to be printed on a line of its own with its own fix."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.items: list[Check] = []

    def add(self, status: str, message: str, fix: str | None = None) -> None:
        self.items.append(Check(self.name, status, message, fix))

    def checks(self, ok_message: str) -> list[Check]:
        """One ok check saying ok_message when nothing was found, else one check per problem."""
        return list(self.items) or [Check(self.name, OK, ok_message)]


def ago(seconds: float) -> str:
    """A past duration in words: `3 days`, `5 h`, `12 min`."""
    if seconds >= 2 * 86400:
        return plural(int(seconds // 86400), "day")
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h"
    return f"{max(0, int(seconds // 60))} min"
