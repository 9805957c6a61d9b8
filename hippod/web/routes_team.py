"""`/v1/team/changes`, a team server's feed of changes for its members' caches, and `/v1/team/marks`,
their retrievals and outcome marks of team memories coming back (docs/team.md)."""

from __future__ import annotations

from starlette.responses import Response

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import TeamChangesReply, TeamMarksReply
from hippoctl.protocol.validate import TEAM_FEED_PAGE_MAX as MAX_PAGE
from hippod.web import wire
from hippod.web.errors import HttpError
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


async def team_marks(call: Call) -> Response:
    given = await call.body(wire.TeamMarksIn)
    key = call.request.headers.get("idempotency-key")
    if key is not None and not 1 <= len(key) <= 256:
        raise HttpError(400, "bad_request", "Idempotency-Key must be 1 to 256 characters")
    reply: TeamMarksReply = await call.run(
        m.TeamMarks(retrieved=given.retrieved, good=given.good, bad=given.bad, batch_key=key)
    )
    return json_response(
        wire.TeamMarksResult(retrieved=reply.retrieved, good=reply.good, bad=reply.bad, again=reply.again)
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
    Op(
        "POST",
        "/v1/team/marks",
        team_marks,
        "A member's retrievals and outcome marks of team memories, in one batch of at most 1000 ids; "
        "sent again with the same Idempotency-Key, a batch is applied once",
        body=wire.TeamMarksIn,
        ok=(200, wire.TeamMarksResult),
    ),
)
