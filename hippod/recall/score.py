"""The composite recall score: BM25 base times every multiplier that applies (recall.md §5)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime

import msgspec

from hippod.base.clock import days_between, parse_iso
from hippod.model.memory import Memory
from hippod.model.strength import live_strength
from hippod.model.terms import stem
from hippod.recall.bm25 import bm25_parts
from hippod.recall.goal_lift import NO_GOALS, GoalLift
from hippod.recall.proximity import proximity, query_pairs
from hippod.store.records import TermStats

# Compared by stem, so that query words and query terms both work.
RECENT_WORDS = frozenset(map(stem, ["recently", "latest", "last", "newest", "current", "today"]))
EARLY_WORDS = frozenset(map(stem, ["first", "earliest", "oldest", "initially", "originally"]))


def strength_multiplier(strength: float) -> float:
    return 0.5 + 0.5 * strength


def recency_multiplier(age_days: float) -> float:
    return 0.8 + 0.2 * math.exp(-age_days / 30.0)


def decision_multiplier(tags: Sequence[str]) -> float:
    return 1.2 if "decision" in tags else 1.0


def path_multiplier(memory_tags: Sequence[str], cwd_path_tags: Sequence[str]) -> float:
    """1 + 0.3 x the share of path tags in common; 1.0 when either side has none."""
    if not cwd_path_tags:
        return 1.0
    m = {t for t in memory_tags if t.startswith("path:")}
    if not m:
        return 1.0
    c = set(cwd_path_tags)
    return 1.0 + 0.3 * len(m & c) / max(len(m), len(c))


def outcome_multiplier(pos: int, neg: int) -> float:
    if pos == 0 and neg == 0:
        return 1.0
    return min(1.15, max(0.85, 1.0 + 0.15 * math.tanh((pos - neg) / 2.0)))


def scope_multiplier(tags: Sequence[str], active_scope: str | None) -> float:
    """1.5 for the active scope's tag, 0.5 for only other scope tags, else 1.0."""
    if not active_scope:
        return 1.0
    scoped = [t for t in tags if t.startswith("scope:")]
    if f"scope:{active_scope}" in scoped:
        return 1.5
    return 0.5 if scoped else 1.0


def extracted_multiplier(tags: Sequence[str]) -> float:
    return 1.3 if "extracted" in tags else 1.0


def temporal_direction(query_tokens: Sequence[str]) -> int:
    """+1 when the query asks for the newest, -1 for the oldest, 0 otherwise."""
    words = {stem(t) for t in query_tokens}
    if words & RECENT_WORDS:
        return 1
    if words & EARLY_WORDS:
        return -1
    return 0


def temporal_multiplier(direction: int, position: float) -> float:
    """position is the created time normalised to [0, 1] over the candidates."""
    if direction > 0:
        return 0.8 + 0.4 * position
    if direction < 0:
        return 0.8 + 0.4 * (1.0 - position)
    return 1.0


# Share of the neighbour's BM25 a candidate gets on top of its own (see `context_multiplier`).
CONTEXT_WEIGHT = 0.4
# Neighbours count only when stored this close in time: "in the same breath", not a week apart.
CONTEXT_WINDOW_SECONDS = 30 * 60


def neighbour_lift(
    shares: Sequence[Mapping[str, float]],
    present: Sequence[AbstractSet[str]],
    rowids: Sequence[int],
    sessions: Sequence[str | None],
    created: Sequence[str],
) -> list[float]:
    """Per candidate, the BM25 a neighbour earns on query terms the candidate itself lacks (the best one).

    A neighbour is a candidate whose row number is one less or one more (the memory stored just
    before or just after it in the store), that came from the same session (both None counts as
    the same) and was created within CONTEXT_WINDOW_SECONDS of it (`created`: ISO timestamps, parsed
    only for candidates that have a neighbour, as most have none).
    `shares` are the per-term BM25 shares of each candidate, `present` its terms (or at least the
    query's terms it holds, which is all this looks up). Only what the
    neighbour adds counts: notes that all repeat the same words lift each other by nothing.
    """
    by_row = {row: i for i, row in enumerate(rowids)}
    stamps: dict[int, float] = {}

    def stamp(i: int) -> float:
        if i not in stamps:
            stamps[i] = parse_iso(created[i]).timestamp()
        return stamps[i]

    best = [0.0] * len(rowids)
    for i, row in enumerate(rowids):
        before, after = by_row.get(row - 1), by_row.get(row + 1)
        if before is None and after is None:
            continue  # most candidates: no neighbour among them
        found = 0.0
        for j in (before, after):
            if (
                j is not None
                and sessions[j] == sessions[i]
                and abs(stamp(j) - stamp(i)) <= CONTEXT_WINDOW_SECONDS
            ):
                found = max(found, sum(v for t, v in shares[j].items() if t not in present[i]))
        best[i] = found
    return best


def context_multiplier(bm25: float, lift: float) -> float:
    """1 + CONTEXT_WEIGHT x lift / bm25; 1.0 without a lift or without a BM25 of its own.

    The memory scores as if CONTEXT_WEIGHT of its neighbour's BM25 on the query terms it lacks were
    added to its own: a memory saved in the same breath as a strong match (the reply to a question,
    the second half of a note) is often what the query is after, even when it repeats few of the
    query's words.
    """
    if lift <= 0 or bm25 <= 0:
        return 1.0
    return 1.0 + CONTEXT_WEIGHT * lift / bm25


# A msgspec Struct, not a dataclass: recall makes one per candidate (200 per store), and a Struct is
# built in C, about a fifth of a slotted dataclass's time. It is never encoded.
class Scored(msgspec.Struct):
    """A candidate with its score and every factor that made it."""

    memory: Memory
    score: float
    bm25: float
    base: float
    strength: float
    retrieved_days: float
    matched: list[str]
    multipliers: dict[str, float] = msgspec.field(default_factory=dict)
    source: str = "local"
    bm25_norm: float = 0.0  # bm25 / the best bm25 among this store's candidates
    cosine: float | None = None  # with embeddings: cosine of the query and memory vectors
    vector: bytes | None = None  # with embeddings: the memory's stored vector, for MMR
    words_only: bool = False  # with embeddings: no current vector yet, so ranked by its words alone
    # Added by `--hops` (recall/hops.py): how many edges from a selected result, the edge's kind, the
    # entity or memory it went through, and the memory it came from. 0 for a ranked result.
    hop: int = 0
    edge: str | None = None
    via: str | None = None
    origin: str | None = None


@dataclass(frozen=True, slots=True)
class ScoreContext:
    """What a score depends on besides the candidate itself."""

    now: datetime
    cwd_path_tags: Sequence[str]
    active_scope: str | None = None
    loss_aversion: float = 1.0
    goals: GoalLift = NO_GOALS  # `recall --goal`, else the goals on the stack (recall/goal_lift.py)


def score_candidates(
    query_tokens: Sequence[str],
    candidates: Sequence[Memory],
    doc_tokens: Sequence[Sequence[str]],
    ctx: ScoreContext,
    *,
    cosines: Sequence[float | None] | None = None,
    hybrid_weight: float = 0.6,
    cosine_floor: float = 0.0,
    rowids: Sequence[int] | None = None,
    stats: TermStats | None = None,
) -> list[Scored]:
    """Score one store's candidates, dropping those whose base or score is not above zero.

    Without `cosines` the base is BM25 per query token. With them (embeddings active, one entry
    per candidate, None where a memory has no vector) the base is the hybrid of recall.md §5:
    (1 - w) x bm25 / max_bm25 + w x max(0, cosine), so a memory no query term matches can still
    come back on meaning alone, but only when its cosine reaches `cosine_floor`: every text has
    some small cosine with every other, and below the floor it says nothing about relatedness.

    With `rowids` (the candidates' row numbers in the store), a candidate stored right next to
    another candidate gets CONTEXT_WEIGHT of that neighbour's BM25 added to its own. Without
    embeddings that is the `context` multiplier, listed only where it applies; in the hybrid it
    lifts the BM25 share (normalised by the best lifted BM25), so it never scales the cosine.
    """
    if not candidates or not query_tokens:
        return []
    rows, hits = stats if stats is not None else (0, None)
    shares, idfs = bm25_parts(query_tokens, doc_tokens, rows, hits)
    raw = [sum(parts.values()) for parts in shares]
    pairs = query_pairs(query_tokens)
    if pairs:
        with_pairs = [
            bm25 + proximity(pairs, doc, parts, idfs) if len(parts) > 1 else bm25
            for bm25, doc, parts in zip(raw, doc_tokens, shares, strict=True)
        ]
    else:
        with_pairs = raw
    direction = temporal_direction(query_tokens)
    if direction:
        temporal = [temporal_multiplier(direction, at) for at in _created_positions(candidates)]
    else:
        temporal = [1.0] * len(candidates)
    if rowids is None:
        near = [0.0] * len(candidates)
    else:
        # A candidate's shares hold exactly the query terms it contains.
        held = [parts.keys() for parts in shares]
        sessions = [c.source_session_id for c in candidates]
        near = neighbour_lift(shares, held, rowids, sessions, [c.created for c in candidates])
    # Without a neighbour's lift the context multiplier is 1.0: own x 1.0 is own.
    lifted = [
        (own * context_multiplier(own, n) if n > 0 else own) if own > 0 else 0.0
        for own, n in zip(with_pairs, near, strict=True)
    ]
    best = max(lifted)
    sims = cosines if cosines is not None else [None] * len(candidates)
    now, loss_aversion = ctx.now, ctx.loss_aversion
    by_tags = _TagFactors(ctx.cwd_path_tags, ctx.active_scope, ctx.goals)
    # Days from each timestamp to now, parsed once: a memory never retrieved was last retrieved when
    # it was created, and the memories one recall returned share the moment it strengthened them.
    ages: dict[str, float] = {}
    results: list[Scored] = []
    for memory, parts_of, bm25, together, own, in_time, cosine, neighbour in zip(
        candidates, shares, raw, with_pairs, lifted, temporal, sims, near, strict=True
    ):
        norm = own / best if best > 0 else 0.0
        if cosines is None:
            base = bm25 / len(query_tokens)
        elif bm25 <= 0 and (cosine is None or cosine < cosine_floor):
            continue
        else:
            base = (1.0 - hybrid_weight) * norm + hybrid_weight * max(0.0, cosine or 0.0)
        if base <= 0:
            continue
        # memory.strength_at(now, loss_aversion), less the parts recall does not read.
        retrieved = ages.get(memory.last_retrieved)
        if retrieved is None:
            retrieved = ages[memory.last_retrieved] = days_between(memory.last_retrieved, now)
        created = ages.get(memory.created)
        if created is None:
            created = ages[memory.created] = days_between(memory.created, now)
        strength = live_strength(
            retrieved,
            memory.half_life_days,
            memory.outcome_positive,
            memory.outcome_negative,
            memory.retrieval_count,
            memory.emotional_valence,
            memory.pinned,
            loss_aversion,
        )
        decision, path, scope, extracted, goal = by_tags(memory.tags)
        multipliers = {
            "strength": strength_multiplier(strength),
            "recency": recency_multiplier(created),
            "decision": decision,
            "path": path,
            "outcome": outcome_multiplier(memory.outcome_positive, memory.outcome_negative),
            "scope": scope,
            "extracted": extracted,
            "temporal": in_time,
        }
        if cosines is None and together != bm25:
            multipliers["proximity"] = together / bm25
        if cosines is None and own != together:
            multipliers["context"] = context_multiplier(together, neighbour)  # = own / together
        if goal is not None:  # only while a goal is in play, so --why shows what it lifted
            multipliers["goal"] = goal
        score = base * math.prod(multipliers.values())
        if score <= 0:
            continue
        results.append(
            Scored(
                memory,
                score,
                bm25,
                base,
                strength,
                retrieved,
                list(parts_of),  # the distinct query terms it holds, in query order
                multipliers,
                "local",
                norm,
                cosine,
            )
        )
    return results


class _TagFactors:
    """The multipliers that read only a memory's tags (decision, path, scope, extracted, and goal:
    None when no goal is in play), worked out once per distinct list of tags: the candidates of a
    project share a handful of them."""

    def __init__(self, cwd_path_tags: Sequence[str], active_scope: str | None, goals: GoalLift) -> None:
        self._cwd_path_tags = cwd_path_tags
        self._active_scope = active_scope
        self._goals = goals if goals.in_play else None
        self._known: dict[tuple[str, ...], tuple[float, float, float, float, float | None]] = {}

    def __call__(self, tags: Sequence[str]) -> tuple[float, float, float, float, float | None]:
        key = tuple(tags)
        found = self._known.get(key)
        if found is None:
            found = self._known[key] = (
                decision_multiplier(tags),
                path_multiplier(tags, self._cwd_path_tags),
                scope_multiplier(tags, self._active_scope),
                extracted_multiplier(tags),
                None if self._goals is None else self._goals.multiplier(tags),
            )
        return found


def _stamps(candidates: Sequence[Memory]) -> list[float]:
    return [parse_iso(m.created).timestamp() for m in candidates]


def _created_positions(candidates: Sequence[Memory]) -> list[float]:
    stamps = _stamps(candidates)
    lo, hi = min(stamps), max(stamps)
    if hi == lo:
        return [0.5] * len(stamps)
    return [(s - lo) / (hi - lo) for s in stamps]


def sort_key(item: Scored) -> tuple[float, str, str]:
    """Score descending, then content, then id (code-point order)."""
    return (-item.score, item.memory.content, item.memory.id)


def drop_extracted_sources(items: list[Scored]) -> list[Scored]:
    """When an extracted fact and the memory it came from are both listed, keep only the fact."""
    sources = {i.memory.extracted_from for i in items if i.memory.extracted_from}
    return [i for i in items if i.memory.id not in sources] if sources else items
