"""The dashboard's graph view: the entities the store's memories name and the relations among them,
as `GET /v1/graph` serves them (store/sqlite/graph_reads.py)."""

from __future__ import annotations

import msgspec

from hippod.dashboard.calls import ViewCall
from hippod.model.entities import MAX_NAME
from hippod.store.sqlite import graph_reads

SHOWN = 150  # more nodes than this make a hairball on a laptop's screen


class Node(msgspec.Struct):
    id: int
    type: str
    name: str
    memories: int


class Edge(msgspec.Struct):
    source: int
    target: int
    rel: str


class Graph(msgspec.Struct):
    store: str
    entity: str | None
    nodes: list[Node]
    edges: list[Edge]
    truncated: bool


async def graph(call: ViewCall) -> Graph:
    """The most named entities (or one entity and its neighbours) and their relations."""
    entity = call.text("entity", MAX_NAME)
    limit = call.number("limit", SHOWN, 1, 1000)
    store = await call.store()
    nodes, edges, truncated = await graph_reads.graph(
        store.db.reader, call.tenant, entity=entity, limit=limit
    )
    return Graph(
        store=store.root,
        entity=entity,
        nodes=[Node(n.id, n.type, n.name, n.memories) for n in nodes],
        edges=[Edge(e.source, e.target, e.rel) for e in edges],
        truncated=truncated,
    )
