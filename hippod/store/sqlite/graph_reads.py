"""Reading the entity graph: a memory's neighbours one hop away (`recall --hops`), and the entities
with their relations (`GET /v1/graph`, the dashboard's graph view)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import aiosqlite
from aiosqlite import Row

from hippod.model.entities import ENTITY_TYPES

# An entity named by more memories than this links them all to each other, which says nothing:
# the walk does not cross it (its memories still link through their other entities).
HUB_MENTIONS = 50
CHUNK = 500
# The memory-to-memory edge each entity type makes.
EDGE_OF_TYPE = {"entity": "entity", "artifact": "artifact"}
MENTIONS = "mentions"


@dataclass(frozen=True, slots=True)
class Step:
    """One edge of the walk: from `origin` to `other`, of kind `edge`, through `via` (an entity's name
    or the other memory's id)."""

    origin: str
    other: str
    edge: str
    via: str


async def _rows(conn: aiosqlite.Connection, sql: str, params: Sequence[object]) -> list[Row]:
    return list(await conn.execute_fetchall(sql, params))


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


async def neighbours(conn: aiosqlite.Connection, tenant: str, ids: Sequence[str]) -> list[Step]:
    """Every memory one edge away from one of `ids` (not admission-filtered: the caller does that)."""
    steps: list[Step] = []
    for start in range(0, len(ids), CHUNK):
        chunk = list(ids[start : start + CHUNK])
        steps += await _through_entities(conn, tenant, chunk)
        steps += await _links(conn, tenant, chunk)
        steps += await _conflicts(conn, tenant, chunk)
    return steps


async def _through_entities(conn: aiosqlite.Connection, tenant: str, ids: list[str]) -> list[Step]:
    named = await conn.execute_fetchall(
        "SELECT g.memory_id, e.id, e.type, e.name FROM graph_mentions g "
        f"JOIN graph_entities e ON e.id = g.entity_id WHERE g.memory_id IN ({_marks(ids)}) "
        "AND e.tenant_id = ?",
        [*ids, tenant],
    )
    if not named:
        return []
    entity_ids = sorted({int(r[1]) for r in named})
    # A hub is told by its kept count: its mentions are never read.
    members = await conn.execute_fetchall(
        "SELECT g.entity_id, g.memory_id FROM graph_entities e CROSS JOIN graph_mentions g "
        f"ON g.entity_id = e.id WHERE e.id IN ({_marks(entity_ids)}) AND e.mentions <= {HUB_MENTIONS}",
        entity_ids,
    )
    by_entity: dict[int, list[str]] = {}
    for entity_id, memory_id in members:
        by_entity.setdefault(int(entity_id), []).append(str(memory_id))
    steps: list[Step] = []
    for origin, entity_id, kind, name in named:
        edge = EDGE_OF_TYPE.get(str(kind), MENTIONS)
        for other in by_entity.get(int(entity_id), []):
            if other != origin:
                steps.append(Step(str(origin), other, edge, str(name)))
    return steps


async def _links(conn: aiosqlite.Connection, tenant: str, ids: list[str]) -> list[Step]:
    marks = _marks(ids)
    rows = await conn.execute_fetchall(
        f"SELECT a, b, rel FROM graph_links WHERE tenant_id = ? AND a IN ({marks}) "
        f"UNION SELECT a, b, rel FROM graph_links WHERE tenant_id = ? AND b IN ({marks})",
        [tenant, *ids, tenant, *ids],
    )
    wanted = set(ids)
    steps: list[Step] = []
    for a, b, rel in rows:
        if a in wanted:
            steps.append(Step(str(a), str(b), str(rel), str(b)))
        if b in wanted:
            steps.append(Step(str(b), str(a), str(rel), str(a)))
    return steps


async def _conflicts(conn: aiosqlite.Connection, tenant: str, ids: list[str]) -> list[Step]:
    marks = _marks(ids)
    rows = await conn.execute_fetchall(
        "SELECT memory_a_id, memory_b_id FROM memory_conflicts WHERE tenant_id = ? AND status = 'open' "
        f"AND (memory_a_id IN ({marks}) OR memory_b_id IN ({marks}))",
        [tenant, *ids, *ids],
    )
    wanted = set(ids)
    steps: list[Step] = []
    for a, b in rows:
        if a in wanted:
            steps.append(Step(str(a), str(b), "conflict", str(b)))
        if b in wanted:
            steps.append(Step(str(b), str(a), "conflict", str(a)))
    return steps


@dataclass(frozen=True, slots=True)
class Node:
    id: int
    type: str
    name: str
    memories: int


@dataclass(frozen=True, slots=True)
class Edge:
    source: int
    target: int
    rel: str


async def graph(
    conn: aiosqlite.Connection, tenant: str, *, entity: str | None, limit: int
) -> tuple[list[Node], list[Edge], bool]:
    """The tenant's entities (the most named first) and the relations among them, at most `limit` of
    each, and whether either list may be cut short. With `entity`, the entities of that name, their
    neighbours by relation, and the relations among them.

    Its work grows with `limit`, not with the store: the counts are kept per entity and per relation
    (graph_index.py and the triggers of migrations_graph.py), and every read goes through an index in
    the order it is shown."""
    if entity is None:
        rows = await _rows(
            conn,
            "SELECT id, type, name, mentions FROM graph_entities WHERE tenant_id = ? "
            "ORDER BY mentions DESC, type, name LIMIT ?",
            (tenant, limit),
        )
        truncated = len(rows) >= limit
    else:
        focus = await _rows(
            conn,
            f"SELECT id FROM graph_entities WHERE tenant_id = ? AND type IN ({_marks(ENTITY_TYPES)}) "
            "AND name = ? ORDER BY id LIMIT ?",
            (tenant, *ENTITY_TYPES, entity, limit),
        )
        if not focus:
            return [], [], False
        ids = [int(r[0]) for r in focus]
        # Each side on its own index, each cut at the limit (a UNION would read all before cutting).
        edges = "SELECT from_id, to_id FROM graph_edges WHERE {side} IN ({marks}) LIMIT ?"
        outgoing = await _rows(conn, edges.format(side="from_id", marks=_marks(ids)), [*ids, limit])
        incoming = await _rows(conn, edges.format(side="to_id", marks=_marks(ids)), [*ids, limit])
        near = [*outgoing, *incoming]
        union = dict.fromkeys(ids)
        for a, b in near:
            union.update(dict.fromkeys((int(a), int(b))))
        chosen = list(union)[:limit]
        rows = await _rows(
            conn,
            f"SELECT id, type, name, mentions FROM graph_entities WHERE id IN ({_marks(chosen)}) ORDER BY id",
            chosen,
        )
        cut = max(len(focus), len(outgoing), len(incoming)) >= limit
        truncated = cut or len(union) > len(chosen)
    nodes = [Node(int(i), str(t), str(name), int(n)) for i, t, name, n in rows]
    shown = [n.id for n in nodes]
    if not shown:
        return [], [], truncated
    relations = await _rows(
        conn,
        "SELECT from_id, to_id, rel FROM graph_edges "
        f"WHERE from_id IN ({_marks(shown)}) AND to_id IN ({_marks(shown)}) "
        "ORDER BY from_id, to_id, rel LIMIT ?",
        [*shown, *shown, limit],
    )
    truncated = truncated or len(relations) >= limit
    return nodes, [Edge(int(a), int(b), str(r)) for a, b, r in relations], truncated
