"""`/v1/memories...` and `/v1/outcome`: remember, recall, inspect, forget, archive, supersede, promote
and outcome, each one request through the daemon's dispatcher (integrations.md §9)."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import (
    ForgetReply,
    InspectReply,
    OutcomeReply,
    RecallItem,
    RecallReply,
    RememberReply,
)
from hippoctl.protocol.replies_lifecycle import ShareReply, SupersedeReply
from hippoctl.protocol.validate import MAX_HOPS
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.web import wire
from hippod.web.errors import HttpError
from hippod.web.routing import Call, Op, Param, json_response

MODES = ("bm25", "hybrid", "physics")
DEFAULT_LIMIT = 10
MAX_LIMIT = 1000
ARCHIVE_REASON = "archived over the HTTP API"


def memory_of(fields: dict[str, Any]) -> wire.Memory:
    """A stored memory's fields (records.Memory as a dict) in the wire shape."""
    return wire.Memory(
        id=fields["id"],
        tenant_id=fields["tenant_id"],
        content=fields["content"],
        kind=fields["kind"],
        layer=fields["layer"],
        strength=fields["strength"],
        confidence=fields["confidence"],
        tags=list(fields["tags"]),
        scope=fields["scope"],
        owner=fields["owner"],
        artifact_ref=fields["artifact_ref"],
        created=fields["created"],
        last_retrieved=fields["last_retrieved"],
        retrieval_count=fields["retrieval_count"],
        half_life_days=fields["half_life_days"],
        pinned=bool(fields["pinned"]),
        superseded_by=fields["superseded_by"],
        outcome_positive=fields["outcome_positive"],
        outcome_negative=fields["outcome_negative"],
    )


async def remember(call: Call) -> Response:
    given = await call.body(wire.RememberIn)
    kind = given.kind or "distilled"
    # Our addition: a client that retries a write it got no answer to sends the same key each time,
    # and the memory is stored once.
    request_key = call.request.headers.get("idempotency-key")
    if request_key is not None and not 1 <= len(request_key) <= 256:
        raise HttpError(400, "bad_request", "Idempotency-Key must be 1 to 256 characters")
    reply: RememberReply = await call.run(
        m.Remember(
            request_key=request_key,
            content=given.content,
            tags=given.tags or [],
            error=given.error,
            pin=given.pinned,
            scope=given.scope,
            owner=given.owner,
            artifact_ref=given.artifact_ref,
            kind=kind,
        )
    )
    made = wire.Memory(
        id=reply.id,
        tenant_id=call.principal.tenant,
        content=given.content.strip(),
        kind=kind,
        layer=reply.layer,
        strength=reply.strength,
        confidence=reply.confidence,
        tags=reply.tags,
        scope=given.scope,
        owner=given.owner,
        artifact_ref=given.artifact_ref,
        half_life_days=reply.half_life_days,
        pinned=given.pinned,
        created=reply.created,
    )
    return json_response(made, 201)


def _entry(item: RecallItem) -> wire.RecallEntry:
    why = None
    if item.why is not None:
        why = wire.Why(
            matched=item.why.matched,
            base=item.why.base,
            bm25=item.why.bm25,
            cosine=item.why.cosine,
            multipliers=item.why.multipliers,
        )
    return wire.RecallEntry(
        id=item.id,
        content=item.content,
        score=item.score,
        tokens=item.tokens,
        layer=item.layer,
        tags=item.tags,
        confidence=item.confidence,
        strength=item.strength,
        is_global=item.source == "global",
        pinned=item.pinned,
        created=item.created,
        retrieval_count=item.retrieval_count,
        superseded_by=item.superseded_by,
        why=why,
        truncated=item.truncated,
        full_chars=item.full_chars,
        graph=None if item.graph is None else wire.GraphVia(hops=item.graph.hops, rel_type=item.graph.edge),
    )


async def recall(call: Call) -> Response:
    query = call.query_str("q")
    if not query:
        raise HttpError(400, "bad_request", "q is required")
    mode = call.query_str("mode", 16)
    if mode is not None and mode not in MODES:
        raise HttpError(400, "bad_request", f"mode must be one of {', '.join(MODES)}")
    if mode == "physics":
        raise HippoError(
            "mode_not_available",
            "mode physics is not available in hippod",
            hint="use mode=bm25 or mode=hybrid",
        )
    limit = call.query_int("limit", 1, MAX_LIMIT) or DEFAULT_LIMIT
    reply: RecallReply = await call.run(
        m.Recall(
            query=query,
            limit=limit,
            budget=call.query_int("budget", 0, 1_000_000),
            why=call.query_flag("explain"),
            scope=call.query_text("scope", 256),
            mode=mode,
            hops=call.query_int("hops", 0, MAX_HOPS) or 0,
            # Reading over HTTP ranks and remembers the batch for `POST /v1/outcome`; it does not
            # strengthen (integrations.md §9).
            strengthen=False,
        )
    )
    result = wire.RecallResult(
        query=reply.query,
        mode=reply.mode,
        results=[_entry(i) for i in reply.results],
        total=reply.candidates,
        tokens=reply.tokens,
        suppression_summary=wire.Suppression(
            total_candidates=reply.candidates,
            dropped_pre_rank=0,
            dropped_by_budget=reply.skipped.budget + reply.skipped.limit,
        ),
    )
    return json_response(result)


async def inspect(call: Call) -> Response:
    reply: InspectReply = await call.run(m.Inspect(id=call.path_id()))
    # The stored strength is a cache a sleep refreshes only once it lags (decay.CACHE_DRIFT): a
    # client reading one memory gets its live strength, as recall gives it.
    return json_response(memory_of({**reply.memory, "strength": round(reply.math.strength, 4)}))


async def forget(call: Call) -> Response:
    archive = call.query_flag("archive")
    reason = call.query_text("reason", 1000)
    if archive and reason is None:
        raise HttpError(400, "bad_request", "archive=1 needs a reason")
    reply: ForgetReply = await call.run(m.Forget(id=call.path_id(), archive=archive, reason=reason))
    return json_response(wire.ForgetResult(ok=True, id=reply.id))


async def archive(call: Call) -> Response:
    given = await call.body(wire.ArchiveIn)
    reason = (given.reason or "").strip() or ARCHIVE_REASON
    reply: ForgetReply = await call.run(m.Forget(id=call.path_id(), archive=True, reason=reason))
    done = wire.ArchiveResult(ok=True, id=reply.id, archived_at=clock.iso(clock.now()), reason=reason)
    return json_response(done)


async def supersede(call: Call) -> Response:
    given = await call.body(wire.SupersedeIn)
    if (given.content is None) == (given.new_id is None):
        raise HttpError(400, "bad_request", "send exactly one of content (the new text) and newId")
    body = m.Supersede(id=call.path_id(), content=given.content or "", new_id=given.new_id)
    reply: SupersedeReply = await call.run(body)
    done = wire.SupersedeResult(
        ok=True, id=reply.old, superseded_by=reply.new, old_id=reply.old, new_id=reply.new
    )
    return json_response(done)


async def promote(call: Call) -> Response:
    reply: ShareReply = await call.run(m.Promote(id=call.path_id()))
    item = reply.items[0]
    return json_response(wire.PromoteResult(ok=True, source_id=item.id, global_id=item.global_id or ""))


async def outcome(call: Call) -> Response:
    given = await call.body(wire.OutcomeIn)
    if given.ids is not None and any(not isinstance(i, str) or not i for i in given.ids):
        raise HttpError(400, "bad_request", "ids must be non-empty strings")
    try:
        reply: OutcomeReply = await call.run(m.Outcome(good=given.good, ids=given.ids))
    except HippoError as exc:
        if exc.code != "no_recent_recall":
            raise
        # Nothing recalled yet by this key: nothing marked, as the original answers.
        return json_response(wire.OutcomeResult(applied=0, ids=[]))
    return json_response(wire.OutcomeResult(applied=reply.applied, ids=reply.ids))


_ID = "/{id}"
_LIMIT = Param("limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}, description="default 10")
_BUDGET = Param("budget", {"type": "integer", "minimum": 0, "maximum": 1_000_000}, description="tokens")
_FLAG = {"type": "string", "enum": ["1", "0", "true", "false"]}

OPS = (
    Op("POST", "/v1/memories", remember, "Store one memory", body=wire.RememberIn, ok=(201, wire.Memory)),
    Op(
        "GET",
        "/v1/memories",
        recall,
        "Ranked recall, without strengthening; the batch is what POST /v1/outcome marks",
        query=(
            Param("q", {"type": "string", "minLength": 1, "maxLength": 4096}, required=True),
            _LIMIT,
            _BUDGET,
            Param("mode", {"type": "string", "enum": list(MODES)}, description="physics answers 501"),
            Param("scope", {"type": "string", "maxLength": 256}),
            Param("explain", _FLAG),
            Param(
                "hops",
                {"type": "integer", "minimum": 0, "maximum": MAX_HOPS},
                description="also memories this many entity-graph edges away (default 0)",
            ),
        ),
        ok=(200, wire.RecallResult),
    ),
    Op("GET", "/v1/memories" + _ID, inspect, "Every field of one memory", ok=(200, wire.Memory)),
    Op(
        "DELETE",
        "/v1/memories" + _ID,
        forget,
        "Forget one memory (a raw one only with archive=1 and a reason)",
        query=(Param("archive", _FLAG), Param("reason", {"type": "string", "maxLength": 1000})),
        ok=(200, wire.ForgetResult),
    ),
    Op(
        "POST",
        "/v1/memories" + _ID + "/archive",
        archive,
        "Archive a raw memory: its metadata is kept, its text removed",
        body=wire.ArchiveIn,
        ok=(200, wire.ArchiveResult),
    ),
    Op(
        "POST",
        "/v1/memories" + _ID + "/supersede",
        supersede,
        "Replace a memory by a new text, or by a memory already stored (newId)",
        body=wire.SupersedeIn,
        ok=(200, wire.SupersedeResult),
    ),
    Op(
        "POST",
        "/v1/memories" + _ID + "/promote",
        promote,
        "Copy a project memory to the global store (needs X-Hippo-Store)",
        ok=(200, wire.PromoteResult),
    ),
    Op(
        "POST",
        "/v1/outcome",
        outcome,
        "Mark memories good or bad: the ids given, else this key's last recalled batch",
        body=wire.OutcomeIn,
        ok=(200, wire.OutcomeResult),
    ),
)
