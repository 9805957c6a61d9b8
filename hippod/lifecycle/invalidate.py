"""Which memories an `invalidate "<pattern>"` reaches (memory-model.md §12)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from hippod.model.memory import Memory

STOPWORDS = frozenset(
    """the an is it in on at to for of by and or but not with from that this was are be has had have been
    will would could should do does did all our old new use used using""".split()
)
_OUTSIDE = re.compile(r"[^a-z0-9_.\-]+")


def tokens(text: str) -> set[str]:
    """Lowercase runs of [a-z0-9_.-], at least 2 characters, without the stopwords."""
    return {t for t in _OUTSIDE.split(text.lower()) if len(t) >= 2 and t not in STOPWORDS}


def matches(pattern: str, content: str, tags: Sequence[str]) -> bool:
    """At least half of the pattern's tokens are in the memory, or one tag is the whole pattern."""
    wanted = tokens(pattern)
    lowered = pattern.strip().lower()
    if lowered and any(tag.lower() == lowered for tag in tags):
        return True
    if not wanted:
        return False
    return len(wanted & tokens(content)) >= math.ceil(len(wanted) / 2)


def halved(half_life_days: float) -> float:
    """max(1, floor(hl / 2)): an invalidated memory, or the old side of `decide --supersedes`."""
    return float(max(1, math.floor(half_life_days / 2)))


def weaken(memory: Memory, now: str) -> None:
    """Mark a memory invalidated in place: half-life halved, confidence stale, tag `invalidated`."""
    memory.half_life_days = halved(memory.half_life_days)
    memory.confidence = "stale"
    memory.tags = list(dict.fromkeys([*memory.tags, "invalidated"]))
    memory.updated_at = now
