"""`GET /v1/graph`: the tenant's entity graph, in the original's shape (`nodes` with id, type and
name, `edges` with from, to and relType, `truncated`)."""

from __future__ import annotations

from starlette.responses import Response

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import GraphReply
from hippod.model.entities import MAX_NAME
from hippod.web import wire
from hippod.web.errors import HttpError
from hippod.web.routing import Call, Op, Param, json_response

MAX_LIMIT = 1000


async def graph(call: Call) -> Response:
    raw = call.request.query_params.get("entity")
    if raw is not None and len(raw) > MAX_NAME:
        raise HttpError(400, "bad_request", f"entity exceeds the {MAX_NAME}-character cap")
    entity = call.query_str("entity", MAX_NAME)
    limit = call.query_str("limit", 32)
    if limit is not None and (not limit.isdigit() or not 1 <= int(limit) <= MAX_LIMIT):
        raise HttpError(400, "bad_request", f"limit must be a positive integer <= {MAX_LIMIT}")
    reply: GraphReply = await call.run(m.Graph(entity=entity or None, limit=int(limit or 100)))
    return json_response(
        wire.GraphModel(
            nodes=[
                wire.GraphNode(id=n.id, type=n.type, name=n.name, memories=n.memories) for n in reply.nodes
            ],
            edges=[wire.GraphEdge(from_=e.source, to=e.target, rel_type=e.rel) for e in reply.edges],
            truncated=reply.truncated,
        )
    )


OPS = (
    Op(
        "GET",
        "/v1/graph",
        graph,
        "The entity graph: the entities the memories name, and their relations",
        query=(
            Param("entity", {"type": "string", "maxLength": MAX_NAME}, description="focus on this name"),
            Param(
                "limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}, description="default 100"
            ),
        ),
        ok=(200, wire.GraphModel),
    ),
)
