"""`path:<segment>` tags drawn from a working directory (memory-model.md §12)."""

from __future__ import annotations

import functools
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
    return list(_path_tags(cwd))


# A client sends the same few working directories over and over; every write verb asks for their tags.
@functools.lru_cache(maxsize=256)
def _path_tags(cwd: str) -> tuple[str, ...]:
    segments = [s.lower() for s in re.split(r"[\\/]+", cwd) if s]
    kept = [s for s in segments if len(s) >= 2 and s not in _SKIP and not _DRIVE.match(s)]
    return tuple(f"path:{s}" for s in kept[-MAX_PATH_TAGS:])
