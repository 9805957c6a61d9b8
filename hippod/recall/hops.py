"""`recall --hops N` (recall.md §11): the memories up to N edges of the entity graph away from the
results recall selected, each scored as its origin × 0.5 per hop, for the same budget fill.

Edges (store/sqlite/graph_reads.py): a merge source and the memory made of it (`parents`), an open
conflict pair (`conflict`), a shared `entity:<name>` tag (`entity`), a shared `artifact_ref`
(`artifact`), a shared file path or code name (`mentions`), a superseded memory and its replacement
(`supersedes`). Only the laptop's own SQLite stores have a graph: the team's memories are not walked.
"""

from __future__ import annotations

from collections.abc import Sequence

from hippod.model.memory import Memory
from hippod.recall.score import Scored
from hippod.recall.search import Ranking
from hippod.store.sqlite import graph_reads
from hippod.store.stores import SqliteStore

DECAY = 0.5
# Neighbours taken from one memory at each hop: bounds the walk on a dense graph.
FAN_OUT = 25
# Which edge names an addition reached by more than one at the same hop.
EDGE_ORDER = {"parents": 0, "conflict": 1, "entity": 2, "artifact": 3, "mentions": 4, "supersedes": 5}


async def expand(
    ranking: Ranking,
    seeds: Sequence[Scored],
    hops: int,
    *,
    tenant: str,
    include_superseded: bool,
    scope: str | None,
    loss_aversion: float,
) -> list[Scored]:
    """The graph's additions: memories not in `ranking.ranked`, reached from `seeds` within `hops`."""
    if hops <= 0 or not seeds:
        return []
    present = {s.memory.id for s in ranking.ranked}
    added: list[Scored] = []
    for store, source in ((ranking.project, "local"), (ranking.global_, "global")):
        if not isinstance(store, SqliteStore):
            continue
        mine = [s for s in seeds if s.source == source]
        added += await _walk(
            store, mine, hops, present, source, tenant, include_superseded, scope, ranking, loss_aversion
        )
    return added


async def _walk(
    store: SqliteStore,
    seeds: list[Scored],
    hops: int,
    present: set[str],
    source: str,
    tenant: str,
    include_superseded: bool,
    scope: str | None,
    ranking: Ranking,
    loss_aversion: float,
) -> list[Scored]:
    """Breadth first from `seeds` in one store; `present` gains each memory reached."""
    reader = store.db.reader
    frontier = {s.memory.id: s.score for s in seeds}
    added: list[Scored] = []
    for hop in range(1, hops + 1):
        if not frontier:
            break
        steps = await graph_reads.neighbours(reader, tenant, list(frontier))
        steps.sort(key=lambda s: (s.origin, EDGE_ORDER.get(s.edge, 9), s.other, s.via))
        reached: dict[str, tuple[float, graph_reads.Step]] = {}
        taken: dict[str, int] = {}
        for step in steps:
            if step.other in present or taken.get(step.origin, 0) >= FAN_OUT:
                continue
            score = frontier[step.origin] * DECAY
            best = reached.get(step.other)
            if best is None or (score, -EDGE_ORDER.get(step.edge, 9)) > (
                best[0],
                -EDGE_ORDER.get(best[1].edge, 9),
            ):
                if best is None:
                    taken[step.origin] = taken.get(step.origin, 0) + 1
                reached[step.other] = (score, step)
        if not reached:
            break
        admitted = await store.rows.candidates_ids(
            reader, tenant, list(reached), include_superseded=include_superseded, scope=scope
        )
        frontier = {}
        for candidate in admitted:
            memory = candidate.memory
            score, step = reached[memory.id]
            present.add(memory.id)
            frontier[memory.id] = score
            added.append(_scored(memory, score, hop, step, source, ranking, loss_aversion))
    return added


def _scored(
    memory: Memory, score: float, hop: int, step: graph_reads.Step, source: str, ranking: Ranking, loss: float
) -> Scored:
    """An addition as recall lists it: its graph score, the step that reached it, its live strength."""
    parts = memory.strength_at(ranking.moment, loss)
    return Scored(
        memory,
        score,
        0.0,
        0.0,
        parts.strength,
        parts.days,
        [],
        {"graph": DECAY**hop},
        source,
        hop=hop,
        edge=step.edge,
        via=step.via,
        origin=step.origin,
    )
