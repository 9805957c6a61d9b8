"""Sharing with the global store: transfer score and eligibility (sleep.md §8). Pure functions."""

from __future__ import annotations

import re
from collections.abc import Iterable

from hippod.model.locality import tie
from hippod.model.memory import Memory
from hippod.model.secrets import looks_secret

TRANSFERABLE = frozenset(
    "error platform windows encoding python shell powershell quant backtest pattern rule gotcha "
    "sub-agent review best-practice".split()
)
PROJECT_SPECIFIC = frozenset(
    "file-path config deploy cron url auth field-names column-names api-key endpoint".split()
)
AUTO_SHARE_AT = 0.6
MANUAL_SHARE_AT = 0.3
KEY_CHARS = 200
_SHARED_ISO = re.compile(r":\d{4}-\d\d-\d\dT[^:]*:[^:]*:[^:]*$")
# Sources of the copies `share`, `promote` and auto-share make in the global store. Each holds beyond
# the project it came from (its origin_project): by the user's choice, or as a lesson naming nothing
# of that project, so every project's reads show it (recall.md §9.5).
SHARED = "shared:"
PROMOTED = "promoted:"
AUTO_SHARED = "auto-shared:"
COPY_SOURCES = (SHARED, PROMOTED, AUTO_SHARED)


def transfer_score(memory: Memory) -> float:
    """How likely a memory is to help in other projects, in [0, 1]."""
    if not memory.tags and not memory.pinned and memory.retrieval_count < 3:
        # Nothing to add but the valence's share: the same value, without the sets (a sleep asks
        # this of every memory of the store).
        return 0.55 if memory.emotional_valence in ("negative", "critical") else 0.5
    tags = set(memory.tags)
    score = (
        0.5
        + 0.1 * len(tags & TRANSFERABLE)
        - 0.15 * len(tags & PROJECT_SPECIFIC)
        + 0.1 * (memory.retrieval_count >= 3)
        + 0.1 * memory.pinned
        + 0.05 * (memory.emotional_valence in ("negative", "critical"))
    )
    return round(min(1.0, max(0.0, score)), 4)  # 4 decimals: 0.5 - 0.45 prints as 0.05


def share_key(content: str) -> str:
    """The first 200 lowercased trimmed chars: two memories with the same key count as already present."""
    return content.strip().lower()[:KEY_CHARS]


def private(memory: Memory) -> bool:
    return memory.scope is not None and (memory.scope == "unknown:legacy" or ":private:" in memory.scope)


def auto_share_eligible(memory: Memory, names: Iterable[str]) -> bool:
    """Live, not superseded, not raw, not private-scoped, not secret-flagged (sleep.md §8), and a
    lesson naming nothing of its project, whose `names` are given (locality.tie)."""
    return (
        memory.superseded_by is None
        and memory.kind not in ("raw", "archived")
        and memory.layer != "buffer"
        and not private(memory)
        and tie(memory.content, names) is None
        and not looks_secret(memory.content, memory.tags)
    )


def reaches_every_project(source: str) -> bool:
    """A global copy made by `share`, `promote` or auto-share: shown in every project, whichever
    project its origin_project names."""
    return source.startswith(COPY_SOURCES)


def copy_for(memory: Memory, *, new_id: str, source: str, now: str, origin_project: str | None) -> Memory:
    """A fresh copy of a memory for another store: same text, layer, tags and envelope; new clock,
    no outcomes, links or pin (those belong to the original's store)."""
    return Memory(
        id=new_id,
        tenant_id=memory.tenant_id,
        content=memory.content,
        layer=memory.layer if memory.layer in ("episodic", "semantic", "trace") else "episodic",
        kind="distilled",
        created=now,
        valid_from=now,
        last_retrieved=now,
        retrieval_count=0,
        half_life_days=memory.half_life_days,
        strength=1.0,
        emotional_valence=memory.emotional_valence,
        schema_fit=memory.schema_fit,
        tags=list(memory.tags),
        source=source,
        confidence=memory.confidence,
        pinned=False,
        outcome_positive=0,
        outcome_negative=0,
        outcome_score=None,
        scope=memory.scope,
        owner=memory.owner,
        artifact_ref=memory.artifact_ref,
        origin_project=origin_project,
        trace_outcome=memory.trace_outcome,
        updated_at=now,
    )


def contributor(source: str) -> str | None:
    """The project named by a `shared:<project>:<iso>`, `auto-shared:<project>:<iso>` or
    `promoted:<project>` source."""
    if source.startswith(PROMOTED):
        return source[len(PROMOTED) :]
    for prefix in (SHARED, AUTO_SHARED):
        if source.startswith(prefix):
            rest = source[len(prefix) :]
            match = _SHARED_ISO.search(rest)
            return rest[: match.start()] if match else rest
    return None
