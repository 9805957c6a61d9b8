"""`graph` and `GET /v1/graph`: the entities the store's memories name and the relations among them
(hippod.model.entities, store/sqlite/graph_reads.py)."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import GraphEdgeItem, GraphNodeItem, GraphReply
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.model.entities import MAX_NAME
from hippod.store.sqlite import graph_reads
from hippod.store.stores import sqlite_only

MAX_LIMIT = 1000


async def graph(ctx: RequestContext, body: m.Graph) -> tuple[GraphReply, str]:
    if not 1 <= body.limit <= MAX_LIMIT:
        raise HippoError("usage", f"--limit must be between 1 and {MAX_LIMIT}")
    if body.entity is not None and (not body.entity or len(body.entity) > MAX_NAME):
        raise HippoError("usage", f"--entity must be 1 to {MAX_NAME} characters")
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    nodes, edges, truncated = await graph_reads.graph(
        store.db.reader, ctx.tenant, entity=body.entity, limit=body.limit
    )
    reply = GraphReply(
        nodes=[GraphNodeItem(id=n.id, type=n.type, name=n.name, memories=n.memories) for n in nodes],
        edges=[GraphEdgeItem(source=e.source, target=e.target, rel=e.rel) for e in edges],
        truncated=truncated,
    )
    return reply, _text(reply, body.entity)


def _text(reply: GraphReply, entity: str | None) -> str:
    if not reply.nodes:
        return f"No entity named {entity!r}" if entity is not None else "The graph is empty"
    names = {n.id: f"{n.type}:{n.name}" for n in reply.nodes}
    lines = [
        f"{len(reply.nodes)} entities, {len(reply.edges)} relations"
        + (" (cut at the limit)" if reply.truncated else "")
    ]
    for node in reply.nodes:
        lines.append(f"  {node.type}:{node.name} ({node.memories} memories)")
    for edge in reply.edges:
        lines.append(f"  {names[edge.source]} --{edge.rel}--> {names[edge.target]}")
    return "\n".join(lines)
