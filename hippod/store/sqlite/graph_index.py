"""Keeping the entity graph in step with the memories: the statements that index a memory's entities
(hippod.model.entities), relations and links, run in the transaction of the write that changed it.

Removals need no call: the triggers of migrations_graph.py drop a memory's mentions, relations and
links when it is deleted, superseded or archived, and an entity with no mention left goes with them.
The same triggers keep each entity's mention count, and lower each relation's count of memories;
the count is raised here, one statement for a batch's relations (migration 24: a trigger for each
new relation was a third of the graph's cost on an import).

Each statement touches only the rows of the memories it is given (looked up by index), whatever the
size of the tenant's graph: an upgrade's migration indexes every stored memory through them. The
entities a batch of memories names are looked up once, by their unique key, and the mentions and
relations written with their ids.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiosqlite
import msgspec

from hippod.model.entities import extract

# A memory's graph sources, read back by id after any write: one path for every kind of insert.
_SOURCE = (
    "SELECT id, tenant_id, content, tags, artifact_ref, source, parents, superseded_by, kind "
    "FROM memories WHERE id IN ({marks})"
)
_ENTITY = "INSERT OR IGNORE INTO graph_entities (tenant_id, type, name) VALUES (?, ?, ?)"
# The ids of a batch's entities, each by the unique (tenant_id, type, name) index: CROSS JOIN keeps
# the batch's few keys outside, so the tenant's other entities are never read.
_IDS = (
    "SELECT e.id, e.tenant_id, e.type, e.name FROM json_each(?) j CROSS JOIN graph_entities e "
    "WHERE e.tenant_id = json_extract(j.value, '$[0]') AND e.type = json_extract(j.value, '$[1]') "
    "AND e.name = json_extract(j.value, '$[2]')"
)
_MENTION = "INSERT OR IGNORE INTO graph_mentions (memory_id, entity_id) VALUES (?, ?)"
# The mentions a memory no longer has: those of entities outside the ids it names now.
_STALE = (
    "DELETE FROM graph_mentions WHERE memory_id = ? AND entity_id NOT IN (SELECT value FROM json_each(?))"
)
_RELATIONS_GONE = "DELETE FROM graph_relations WHERE memory_id = ?"
_RELATION = "INSERT OR IGNORE INTO graph_relations (memory_id, from_id, to_id, rel) VALUES (?, ?, ?, ?)"
# Each relation the batch's memories say, counted once more per memory saying it. Every relation of
# those memories is new: theirs were deleted first (_RELATIONS_GONE), a fresh memory's too, so that
# no path can count a relation twice.
_EDGES = (
    "INSERT INTO graph_edges (from_id, to_id, rel, memories) "
    "SELECT from_id, to_id, rel, count(*) FROM graph_relations "
    "WHERE memory_id IN (SELECT value FROM json_each(?)) GROUP BY from_id, to_id, rel "
    "ON CONFLICT (from_id, to_id, rel) DO UPDATE SET memories = memories + excluded.memories"
)
_LINK = "INSERT OR IGNORE INTO graph_links (tenant_id, a, b, rel) VALUES (?, ?, ?, ?)"
CHUNK = 500

Statements = list[tuple[str, list[tuple[Any, ...]]]]
Key = tuple[str, str, str]  # tenant, entity type, name


@dataclass(slots=True)
class _Batch:
    """What a batch of memories names, before the entities have ids."""

    entities: dict[Key, None] = field(default_factory=dict)
    # (memory id, tenant, its entities' keys, its relations (from, to, rel)); keys are None for a
    # memory that is no longer live (its mentions go).
    memories: list[tuple[str, str, list[Key], list[tuple[Key, Key, str]]]] = field(default_factory=list)
    links: list[tuple[Any, ...]] = field(default_factory=list)


def _decoded(value: Any) -> list[str]:
    if isinstance(value, str):
        value = msgspec.json.decode(value)
    return [str(v) for v in value or []]


def _read(rows: Iterable[Sequence[Any]]) -> _Batch:
    """The entities, relations and links of these memories (rows as _SOURCE reads them)."""
    batch = _Batch()
    for memory_id, tenant, content, tags, artifact_ref, source, parents, superseded_by, kind in rows:
        for parent in _decoded(parents):
            batch.links.append((tenant, parent, memory_id, "parents"))
        if superseded_by is not None:
            batch.links.append((tenant, memory_id, superseded_by, "supersedes"))
        live = superseded_by is None and kind != "archived"
        found = extract(content, _decoded(tags), artifact_ref, source) if live else None
        if found is None:
            batch.memories.append((memory_id, tenant, [], []))
            continue
        keys = [(tenant, kind_, name) for kind_, name in found.entities]
        batch.entities.update(dict.fromkeys(keys))
        relations = [((tenant, *a), (tenant, *b), rel) for a, b, rel in found.relations]
        batch.memories.append((memory_id, tenant, keys, relations))
    return batch


def _lookup(batch: _Batch) -> tuple[list[tuple[Any, ...]], str]:
    """_ENTITY's rows and _IDS's parameter for the batch."""
    keys = list(batch.entities)
    return keys, msgspec.json.encode(keys).decode()


def _writes(batch: _Batch, found: Iterable[Sequence[Any]], fresh: bool) -> Statements:
    """The writes that bring the batch's graph rows up to date, given its entities' ids (_IDS's rows);
    `fresh`: the memories were just inserted, so they have no stale mentions to take back."""
    ids = {(str(tenant), str(kind), str(name)): int(entity) for entity, tenant, kind, name in found}
    mentions: list[tuple[Any, ...]] = []
    stale: list[tuple[Any, ...]] = []
    gone: list[tuple[Any, ...]] = []
    relations: list[tuple[Any, ...]] = []
    for memory_id, _, keys, said in batch.memories:
        named = [ids[key] for key in keys]
        mentions.extend((memory_id, entity) for entity in named)
        stale.append((memory_id, msgspec.json.encode(named).decode()))
        gone.append((memory_id,))
        relations.extend((memory_id, ids[a], ids[b], rel) for a, b, rel in said if a in ids and b in ids)
    if fresh:
        stale = []
    saying = sorted({memory_id for memory_id, *_ in relations})
    edges = [(msgspec.json.encode(saying).decode(),)] if saying else []
    # The new mentions first: a stale one removed before them could take with it an entity another
    # memory of the batch is about to name (the last mention's removal deletes its entity).
    return [
        (_MENTION, mentions),
        (_STALE, stale),
        (_RELATIONS_GONE, gone),
        (_RELATION, relations),
        (_EDGES, edges),
        (_LINK, batch.links),
    ]


async def index(conn: aiosqlite.Connection, ids: Sequence[str], *, fresh: bool = False) -> None:
    """Bring the graph rows of these memories (as now stored) up to date, inside the caller's
    transaction (`fresh`: they were inserted by it)."""
    for start in range(0, len(ids), CHUNK):
        chunk = list(ids[start : start + CHUNK])
        batch = _read(await conn.execute_fetchall(_SOURCE.format(marks=", ".join("?" * len(chunk))), chunk))
        entities, wanted = _lookup(batch)
        if entities:
            await conn.executemany(_ENTITY, entities)
        found = await conn.execute_fetchall(_IDS, (wanted,)) if entities else []
        for sql, params in _writes(batch, found, fresh):
            if params:
                await conn.executemany(sql, params)


def index_sync(conn: sqlite3.Connection, ids: Sequence[str], *, fresh: bool = False) -> None:
    """`index` on a plain sqlite3 connection (the migration's)."""
    for start in range(0, len(ids), CHUNK):
        chunk = list(ids[start : start + CHUNK])
        batch = _read(conn.execute(_SOURCE.format(marks=", ".join("?" * len(chunk))), chunk).fetchall())
        entities, wanted = _lookup(batch)
        if entities:
            conn.executemany(_ENTITY, entities)
        found = conn.execute(_IDS, (wanted,)).fetchall() if entities else []
        for sql, params in _writes(batch, found, fresh):
            if params:
                conn.executemany(sql, params)
