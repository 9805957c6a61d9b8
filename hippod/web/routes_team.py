"""`/v1/team/changes`: a team server's feed of changes for its members' caches (docs/team.md)."""

from __future__ import annotations

from starlette.responses import Response

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import TeamChangesReply
from hippod.handlers.team_feed import MAX_PAGE
from hippod.web import wire
from hippod.web.routing import Call, Op, Param, json_response

CURSOR = r"^[0-9]{1,20}:[A-Za-z0-9_:.\-]{0,256}$"


async def team_changes(call: Call) -> Response:
    reply: TeamChangesReply = await call.run(
        m.TeamChanges(after=call.query_str("after", 300), limit=call.query_int("limit", 1, MAX_PAGE) or 500)
    )
    return json_response(
        wire.TeamChanges(
            memories=reply.memories, deleted=reply.deleted, next=reply.next, horizon=reply.horizon
        )
    )


OPS = (
    Op(
        "GET",
        "/v1/team/changes",
        team_changes,
        "A team server's memories written since a cursor, oldest first, and the ids deleted since",
        query=(
            Param(
                "after", {"type": "string", "pattern": CURSOR}, description="a cursor from an earlier page"
            ),
            Param("limit", {"type": "integer", "minimum": 1, "maximum": MAX_PAGE}, description="default 500"),
        ),
        ok=(200, wire.TeamChanges),
    ),
)
