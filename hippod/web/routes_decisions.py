"""`/v1/decisions...`: the `decide` verb over HTTP, in the shapes of the original's SDK."""

from __future__ import annotations

from starlette.responses import Response

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_lifecycle import DecideReply, DecisionItem, DecisionsReply
from hippod.web import wire
from hippod.web.errors import HttpError
from hippod.web.routing import Call, Op, Param, json_response

STATUSES = ("active", "superseded", "closed", "all")
MAX_TEXT = 4096


def decision(d: DecisionItem) -> wire.Decision:
    return wire.Decision(
        id=d.n,
        memory_id=d.memory_id,
        tenant_id=d.tenant,
        decision_text=d.text,
        context=d.context,
        status=d.status,
        superseded_by=d.superseded_by,
        superseded_at=d.superseded_at,
        closed_at=d.closed_at,
        created_at=d.created_at,
    )


def _checked(text: str, context: str | None) -> None:
    if len(text) > MAX_TEXT or (context is not None and len(context) > MAX_TEXT):
        raise HttpError(400, "bad_request", f"text and context are at most {MAX_TEXT} characters each")


async def create(call: Call) -> Response:
    given = await call.body(wire.DecisionIn)
    _checked(given.text, given.context)
    body = m.Decide(text=given.text, context=given.context, supersedes_decision=given.supersedes_decision_id)
    reply: DecideReply = await call.run(body)
    return json_response(wire.DecisionReply(decision=decision(reply.decision)), 201)


async def supersede(call: Call) -> Response:
    given = await call.body(wire.DecisionSupersedeIn)
    _checked(given.text, given.context)
    reply: DecideReply = await call.run(
        m.Decide(text=given.text, context=given.context, supersedes_decision=call.path_number())
    )
    return json_response(wire.DecisionReply(decision=decision(reply.decision)), 201)


async def listed(call: Call) -> Response:
    status = call.query_str("status", 16)
    status = "all" if status is None else status
    if status not in STATUSES:
        raise HttpError(400, "bad_request", f"status must be one of {', '.join(STATUSES)}")
    limit = call.query_int("limit", 1, 1000) or 100
    reply: DecisionsReply = await call.run(m.DecideList(status=None if status == "all" else status))
    return json_response(wire.DecisionList(decisions=[decision(d) for d in reply.decisions[:limit]]))


async def get(call: Call) -> Response:
    reply: DecisionsReply = await call.run(m.DecideGet(n=call.path_number()))
    return json_response(wire.DecisionReply(decision=decision(reply.decisions[0])))


async def close(call: Call) -> Response:
    reply: DecisionsReply = await call.run(m.DecideClose(n=call.path_number()))
    return json_response(wire.DecisionReply(decision=decision(reply.decisions[0])))


_N = "/{n:int}"

OPS = (
    Op(
        "POST",
        "/v1/decisions",
        create,
        "Record a decision",
        body=wire.DecisionIn,
        ok=(201, wire.DecisionReply),
    ),
    Op(
        "GET",
        "/v1/decisions",
        listed,
        "The decisions, newest first",
        query=(
            Param("status", {"type": "string", "enum": list(STATUSES)}, description="default all"),
            Param("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, description="default 100"),
        ),
        ok=(200, wire.DecisionList),
    ),
    Op("GET", "/v1/decisions" + _N, get, "One decision", ok=(200, wire.DecisionReply)),
    Op(
        "POST",
        "/v1/decisions" + _N + "/supersede",
        supersede,
        "Replace an active decision by a new one",
        body=wire.DecisionSupersedeIn,
        ok=(201, wire.DecisionReply),
    ),
    Op(
        "POST",
        "/v1/decisions" + _N + "/close",
        close,
        "Retire an active decision",
        ok=(200, wire.DecisionReply),
    ),
)
