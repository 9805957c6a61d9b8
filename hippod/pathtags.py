"""`path:<segment>` tags drawn from a working directory (memory-model.md §12)."""

from __future__ import annotations

import re

MAX_PATH_TAGS = 4
_SKIP = frozenset(
    {
        *("users", "home", "documents", "desktop", "downloads", "node_modules", ".git", ".hippo"),
        *("dist", "build", "tmp", "temp", "var", "usr", "opt", "etc", "appdata", "local", "roaming"),
    }
)
_DRIVE = re.compile(r"^[a-z]:$")


def path_tags(cwd: str) -> list[str]:
    """Up to four `path:` tags from the last meaningful segments of cwd, in path order."""
    segments = [s.lower() for s in re.split(r"[\\/]+", cwd) if s]
    kept = [s for s in segments if len(s) >= 2 and s not in _SKIP and not _DRIVE.match(s)]
    return [f"path:{s}" for s in kept[-MAX_PATH_TAGS:]]
