"""Keeping the entity graph in step with the memories: the statements that index a memory's entities
(hippod.model.entities), relations and links, run in the transaction of the write that changed it.

Removals need no call: the triggers of migrations_graph.py drop a memory's mentions, relations and
links when it is deleted, superseded or archived, and an entity with no mention left goes with them.
The same triggers keep each entity's mention count and each relation's count of memories.

Each statement touches only the rows of the memories it is given (looked up by index), whatever the
size of the tenant's graph: an upgrade's migration indexes every stored memory through them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
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
_MENTION = (
    "INSERT OR IGNORE INTO graph_mentions (memory_id, entity_id) "
    "SELECT ?, id FROM graph_entities WHERE tenant_id = ? AND type = ? AND name = ?"
)
# The mentions a memory no longer has: by (type, name), so the entities it keeps keep their ids.
# CROSS JOIN fixes the loop order: the memory's own few keys outside, each looked up by the unique
# (tenant_id, type, name) index; the other order reads every entity of the tenant per memory.
_STALE = (
    "DELETE FROM graph_mentions WHERE memory_id = ? AND entity_id NOT IN ("
    "SELECT e.id FROM json_each(?) j CROSS JOIN graph_entities e WHERE e.tenant_id = ? "
    "AND e.type = json_extract(j.value, '$[0]') AND e.name = json_extract(j.value, '$[1]'))"
)
_RELATIONS_GONE = "DELETE FROM graph_relations WHERE memory_id = ?"
_RELATION = (
    "INSERT OR IGNORE INTO graph_relations (memory_id, from_id, to_id, rel) "
    "SELECT ?, a.id, b.id, ? FROM graph_entities a, graph_entities b "
    "WHERE a.tenant_id = ? AND a.type = ? AND a.name = ? AND b.tenant_id = ? AND b.type = ? AND b.name = ?"
)
_LINK = "INSERT OR IGNORE INTO graph_links (tenant_id, a, b, rel) VALUES (?, ?, ?, ?)"
CHUNK = 500

Statements = list[tuple[str, list[tuple[Any, ...]]]]


def _decoded(value: Any) -> list[str]:
    if isinstance(value, str):
        value = msgspec.json.decode(value)
    return [str(v) for v in value or []]


def statements(rows: Iterable[Sequence[Any]]) -> Statements:
    """The writes that bring these memories' graph rows up to date (rows as _SOURCE reads them)."""
    entities: list[tuple[Any, ...]] = []
    mentions: list[tuple[Any, ...]] = []
    stale: list[tuple[Any, ...]] = []
    gone: list[tuple[Any, ...]] = []
    relations: list[tuple[Any, ...]] = []
    links: list[tuple[Any, ...]] = []
    for memory_id, tenant, content, tags, artifact_ref, source, parents, superseded_by, kind in rows:
        for parent in _decoded(parents):
            links.append((tenant, parent, memory_id, "parents"))
        if superseded_by is not None:
            links.append((tenant, memory_id, superseded_by, "supersedes"))
        gone.append((memory_id,))
        live = superseded_by is None and kind != "archived"
        found = extract(content, _decoded(tags), artifact_ref, source) if live else None
        keys = found.entities if found is not None else []
        stale.append((memory_id, msgspec.json.encode(keys).decode(), tenant))
        if found is None:
            continue
        for kind_, name in keys:
            entities.append((tenant, kind_, name))
            mentions.append((memory_id, tenant, kind_, name))
        for (a_type, a_name), (b_type, b_name), rel in found.relations:
            relations.append((memory_id, rel, tenant, a_type, a_name, tenant, b_type, b_name))
    return [
        (_ENTITY, entities),
        (_MENTION, mentions),
        (_STALE, stale),
        (_RELATIONS_GONE, gone),
        (_RELATION, relations),
        (_LINK, links),
    ]


async def index(conn: aiosqlite.Connection, ids: Sequence[str]) -> None:
    """Bring the graph rows of these memories (as now stored) up to date, inside the caller's
    transaction."""
    for start in range(0, len(ids), CHUNK):
        chunk = list(ids[start : start + CHUNK])
        rows = await conn.execute_fetchall(_SOURCE.format(marks=", ".join("?" * len(chunk))), chunk)
        for sql, params in statements(rows):
            if params:
                await conn.executemany(sql, params)


def index_sync(conn: sqlite3.Connection, ids: Sequence[str]) -> None:
    """`index` on a plain sqlite3 connection (the migration's)."""
    for start in range(0, len(ids), CHUNK):
        chunk = list(ids[start : start + CHUNK])
        rows = conn.execute(_SOURCE.format(marks=", ".join("?" * len(chunk))), chunk).fetchall()
        for sql, params in statements(rows):
            if params:
                conn.executemany(sql, params)
