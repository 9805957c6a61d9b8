"""`/v1/cards...`: the work-queue cards over HTTP (integrations.md §14), each route one card verb."""

from __future__ import annotations

from starlette.responses import Response

from hippoctl.protocol import messages_cards as mc
from hippoctl.protocol.messages_cards import STATES
from hippoctl.protocol.replies_cards import (
    CardDetailReply,
    CardItem,
    CardReclaimReply,
    CardReply,
    CardRunItem,
    CardsReply,
)
from hippod.web import wire_cards as w
from hippod.web.errors import HttpError
from hippod.web.routing import Call, Op, Param, json_response


def card(c: CardItem) -> w.Card:
    return w.Card(
        id=c.id,
        title=c.title,
        repo=c.repo,
        contract=c.contract,
        budget=c.budget,
        status=c.status,
        tenant_id=c.tenant,
        created_at=c.created_at,
        updated_at=c.updated_at,
    )


def _run(r: CardRunItem) -> w.CardRun:
    return w.CardRun(r.run, r.runtime, r.started_at, r.lease_expires_at, r.ended_at, r.end_reason)


def _reply(reply: CardReply, status: int = 200) -> Response:
    run = _run(reply.run) if reply.run is not None else None
    return json_response(w.CardReply(card=card(reply.card), run=run, readied=reply.readied), status)


async def create(call: Call) -> Response:
    given = await call.body(w.CardIn)
    body = mc.CardCreate(
        title=given.title,
        repo=given.repo,
        contract=given.contract,
        budget=given.budget,
        depends_on=list(given.depends_on),
    )
    return _reply(await call.run(body), 201)


async def listed(call: Call) -> Response:
    status = call.query_str("status", 16)
    if status is not None and status not in STATES:
        raise HttpError(400, "bad_request", f"status must be one of {', '.join(STATES)}")
    limit = call.query_int("limit", 1, 1000) or 100
    reply: CardsReply = await call.run(mc.CardList(status=status, limit=limit))
    return json_response(w.CardList(cards=[card(c) for c in reply.cards]))


async def show(call: Call) -> Response:
    reply: CardDetailReply = await call.run(mc.CardShow(id=call.path_number()))
    h = reply.handoff
    return json_response(
        w.CardDetail(
            card=card(reply.card),
            depends_on=reply.depends_on,
            dependents=reply.dependents,
            runs=[_run(r) for r in reply.runs],
            comments=[w.CardComment(c.ts, c.author, c.body) for c in reply.comments],
            handoff=w.CardHandoff(h.id, h.session_id, h.summary, h.next_action, h.created_at) if h else None,
        )
    )


async def claim(call: Call) -> Response:
    given = await call.body(w.ClaimIn)
    return _reply(await call.run(mc.CardClaim(id=call.path_number(), runtime=given.runtime)))


async def heartbeat(call: Call) -> Response:
    given = await call.body(w.RunIn)
    return _reply(await call.run(mc.CardHeartbeat(id=call.path_number(), run=given.run)))


async def block(call: Call) -> Response:
    given = await call.body(w.BlockIn)
    return _reply(await call.run(mc.CardBlock(id=call.path_number(), reason=given.reason, run=given.run)))


async def review(call: Call) -> Response:
    given = await call.body(w.RunIn)
    return _reply(await call.run(mc.CardReview(id=call.path_number(), run=given.run)))


async def complete(call: Call) -> Response:
    given = await call.body(w.CompleteIn)
    body = mc.CardComplete(id=call.path_number(), outcome=given.outcome, run=given.run)
    return _reply(await call.run(body))


async def comment(call: Call) -> Response:
    given = await call.body(w.CommentIn)
    return _reply(await call.run(mc.CardComment(id=call.path_number(), body=given.body)), 201)


async def reclaim(call: Call) -> Response:
    reply: CardReclaimReply = await call.run(mc.CardReclaim())
    return json_response(w.ReclaimReply(reclaimed=[w.Reclaimed(r.card, r.run) for r in reply.reclaimed]))


_N = "/v1/cards/{n:int}"

OPS = (
    Op("POST", "/v1/cards", create, "Add a card to the work queue", body=w.CardIn, ok=(201, w.CardReply)),
    Op(
        "GET",
        "/v1/cards",
        listed,
        "The cards, newest-updated first",
        query=(
            Param("status", {"type": "string", "enum": list(STATES)}, description="default: every state"),
            Param("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, description="default 100"),
        ),
        ok=(200, w.CardList),
    ),
    Op("POST", "/v1/cards/reclaim", reclaim, "Expired leases back to ready", ok=(200, w.ReclaimReply)),
    Op("GET", _N, show, "One card with its dependencies, runs, comments and handoff", ok=(200, w.CardDetail)),
    Op("POST", _N + "/claim", claim, "Claim a ready or blocked card", body=w.ClaimIn, ok=(200, w.CardReply)),
    Op(
        "POST",
        _N + "/heartbeat",
        heartbeat,
        "Renew the live run's lease",
        body=w.RunIn,
        ok=(200, w.CardReply),
    ),
    Op("POST", _N + "/block", block, "Block a running card", body=w.BlockIn, ok=(200, w.CardReply)),
    Op("POST", _N + "/review", review, "Hand a running card to review", body=w.RunIn, ok=(200, w.CardReply)),
    Op(
        "POST",
        _N + "/complete",
        complete,
        "Complete a card in review",
        body=w.CompleteIn,
        ok=(200, w.CardReply),
    ),
    Op("POST", _N + "/comments", comment, "Comment on a card", body=w.CommentIn, ok=(201, w.CardReply)),
)
