"""Merging project-store, global-store and team results (recall.md §6)."""

from __future__ import annotations

from collections.abc import Sequence

from hippod.recall.score import Scored, sort_key

DEDUPE_PREFIX = 200


def merge_results(
    local: list[Scored],
    global_: list[Scored],
    local_bump: float,
    team: Sequence[Scored] = (),
    team_bump: float = 1.0,
) -> list[Scored]:
    """Bump local (and team) scores, list local first, then global, then the team's (from a laptop's
    copy of its team server's memories); drop later copies of the same text; sort by rank."""
    for item in local:
        item.source = "local"
        if local_bump != 1.0:
            item.score *= local_bump
            item.multipliers["local"] = local_bump
    for item in global_:
        item.source = "global"
    for item in team:
        item.source = "team"
        if team_bump != 1.0:
            item.score *= team_bump
            item.multipliers["team"] = team_bump
    seen: set[str] = set()
    merged: list[Scored] = []
    for item in [*local, *global_, *team]:
        key = item.memory.content.strip().lower()[:DEDUPE_PREFIX]
        if key in seen:
            continue
        seen.add(key)
        merged.append(item)
    merged.sort(key=sort_key)
    return merged
