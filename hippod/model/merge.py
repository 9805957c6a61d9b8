"""Merging related episodes into semantic memories (sleep.md §5). Pure functions."""

from __future__ import annotations

import math
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from hippod.base.clock import iso, parse_iso
from hippod.model.decay import net_negative
from hippod.model.memory import Memory
from hippod.model.strength import ERROR_HALF_LIFE_FACTOR
from hippod.model.tokenize import tokenize
from hippod.model.wordsets import TokenColumn, pairs

MERGE_AT = 0.35
SOURCE_HALF_LIFE_FACTOR = 0.3
LINE_CHARS = 120
SEVERITY = {"neutral": 0, "positive": 1, "negative": 2, "critical": 3}


def merge_candidate(memory: Memory) -> bool:
    """Surviving episodes that may be merged (sleep.md §5.1)."""
    return (
        memory.layer == "episodic"
        and not memory.pinned
        and memory.kind not in ("raw", "archived")
        and memory.superseded_by is None
        and memory.compaction_id is None
        and memory.source != "decision"
        and "extracted" not in memory.tags
        and not net_negative(memory)
        and memory.merged_into is None
    )


def clusters(candidates: Sequence[Memory], settled_through: datetime | None = None) -> list[list[Memory]]:
    """Seed-based clusters of >= 2 members, per tenant, in created-then-id order (sleep.md §5.2).

    `settled_through` is when the previous sleep ran. A candidate not changed since then (its
    `updated_at`: a new memory, a recall, a mark or a restore all move it) was compared with every
    earlier candidate by that sleep and is still unmerged, so it matched none of them: it becomes
    a seed without asking again. Only the others are looked up, which keeps a daily sleep of a
    large store proportional to what changed since the last one.
    """
    by_tenant: dict[str, list[Memory]] = {}
    for memory in candidates:
        by_tenant.setdefault(memory.tenant_id, []).append(memory)
    found: list[list[Memory]] = []
    for tenant in sorted(by_tenant):
        items = sorted(by_tenant[tenant], key=lambda m: (m.created, m.id))
        settled = [settled_through is not None and parse_iso(m.updated_at) < settled_through for m in items]
        column = TokenColumn().extend(tokenize(m.content) for m in items)
        found_pairs = pairs(column, range(len(items)), MERGE_AT, probe=[not s for s in settled])
        found += [[items[k] for k in members] for members in walk(found_pairs, settled)]
    return found


def walk(overlapping: Iterable[tuple[int, int]], settled: Sequence[bool]) -> list[list[int]]:
    """The clusters of sleep.md §5.2 from the pairs (i, j), i < j, of walk positions that overlap
    >= 0.35: walking in order, an item joins the earliest earlier seed it overlaps, else it is a
    seed itself, which gives the same clusters as "each seed takes every later unclustered match".
    A settled item is a seed without asking (see `clusters`). Clusters of >= 2, by their seed.
    """
    earlier: dict[int, list[int]] = {}
    for i, j in overlapping:
        earlier.setdefault(j, []).append(i)
    joined: set[int] = set()
    members_of: dict[int, list[int]] = {}
    for j in sorted(earlier):
        if settled[j]:
            continue
        seeds = [i for i in earlier[j] if i not in joined]
        if seeds:
            seed = min(seeds)
            members_of.setdefault(seed, [seed]).append(j)
            joined.add(j)
    return [members_of[seed] for seed in sorted(members_of)]


def merged_content(members: Sequence[Memory]) -> str:
    """The text of the semantic memory for a cluster (sleep.md §5.3)."""
    if len(members) == 2:
        longest = sorted(members, key=lambda m: (-len(m.content), m.content, m.id))[0]
        return f"[Consolidated from 2 related memories]\n\n{longest.content}"
    lines = [f"- {m.content.splitlines()[0][:LINE_CHARS] if m.content else ''}" for m in members]
    return f"[Consolidated pattern from {len(members)} related memories]\n\n" + "\n".join(lines)


def new_semantic_id() -> str:
    """The id of a semantic memory a merge makes."""
    return "sem_" + secrets.token_hex(6)


@dataclass(frozen=True, slots=True)
class Demoted:
    """A merged episode as its merge changes it (sleep.md §5.4): the fields of its row the merge sets.
    The rest of the row is unchanged, so a plan need not hold it: a large first sleep demotes a
    hundred thousand episodes."""

    id: str
    half_life_days: float
    merged_into: str
    strength: float  # at the sleep, on the new half-life
    updated_at: str

    def onto(self, memory: Memory) -> Memory:
        """A copy of the episode's row (as read, or as the plan made it so far) with this change made."""
        return replace(
            memory,
            half_life_days=self.half_life_days,
            merged_into=self.merged_into,
            strength=self.strength,
            updated_at=self.updated_at,
        )


@dataclass(slots=True)
class Merge:
    semantic: Memory
    members: list[Demoted]
    first_text: str  # the first member's content, which the report quotes


def build_merge(
    members: Sequence[Memory],
    *,
    new_id: str,
    now: datetime,
    default_half_life: float,
    origin_project: str | None,
    loss_aversion: float,
) -> Merge:
    """The new semantic memory and the demoted members of one cluster."""
    stamp = iso(now)
    tags = list(dict.fromkeys(t for m in members for t in m.tags))
    valence = max((m.emotional_valence for m in members), key=lambda v: SEVERITY.get(v, 0))
    has_error = any("error" in m.tags for m in members)
    first = members[0]
    semantic = Memory(
        id=new_id,
        tenant_id=first.tenant_id,
        content=merged_content(members),
        layer="semantic",
        kind="distilled",
        created=stamp,
        valid_from=stamp,
        last_retrieved=stamp,
        retrieval_count=0,
        half_life_days=default_half_life * (ERROR_HALF_LIFE_FACTOR if has_error else 1.0),
        strength=1.0,
        emotional_valence=valence,
        schema_fit=0.7,
        tags=tags,
        source="consolidation",
        confidence="inferred",
        pinned=False,
        outcome_positive=0,
        outcome_negative=0,
        outcome_score=None,
        parents=[m.id for m in members],
        origin_project=origin_project,
        updated_at=stamp,
    )
    demoted = []
    for m in members:
        half_life = float(max(1, math.floor(m.half_life_days * SOURCE_HALF_LIFE_FACTOR)))
        strength = replace(m, half_life_days=half_life).strength_at(now, loss_aversion).strength
        demoted.append(Demoted(m.id, half_life, new_id, strength, stamp))
    return Merge(semantic, demoted, first.content)


def merge_detail(merge: Merge) -> str:
    """The report line of one merge; the first member's text, whitespace collapsed, cut to 60 chars."""
    text = " ".join(merge.first_text.split())
    return f'merged {len(merge.members)} episodic entries into semantic: "{text[:60]}..."'
