"""Merging project-store and global-store results (recall.md §6)."""

from __future__ import annotations

from hippod.recall.score import Scored, sort_key

DEDUPE_PREFIX = 200


def merge_results(local: list[Scored], global_: list[Scored], local_bump: float) -> list[Scored]:
    """Bump local scores, list local first, drop later copies of the same text, sort by rank."""
    for item in local:
        item.source = "local"
        if local_bump != 1.0:
            item.score *= local_bump
            item.multipliers["local"] = local_bump
    for item in global_:
        item.source = "global"
    seen: set[str] = set()
    merged: list[Scored] = []
    for item in [*local, *global_]:
        key = item.memory.content.strip().lower()[:DEDUPE_PREFIX]
        if key in seen:
            continue
        seen.add(key)
        merged.append(item)
    merged.sort(key=sort_key)
    return merged
