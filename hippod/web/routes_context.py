"""Reads for an agent's prompt and the store's upkeep: `/v1/context`, `/v1/sessions/{id}/assemble`,
`/v1/recall/drill/{id}` and `/v1/sleep` (integrations.md §9)."""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.responses import Response

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_context import ContextMemory, ContextReply
from hippoctl.protocol.replies_lifecycle import SleepReply
from hippoctl.protocol.replies_mcp import AssembleReply, DrillReply, McpToolReply
from hippoctl.protocol.replies_pinned import PinnedItem, PinnedReply
from hippod.recall.budget import tokens
from hippod.web import wire
from hippod.web.routing import Call, Op, Param, json_response
from hippod.web.wire import camel

_FLAG = {"type": "string", "enum": ["1", "0", "true", "false"]}
_COUNT = {"type": "integer", "minimum": 0, "maximum": 1_000_000}


async def context(call: Call) -> Response:
    pinned_only = call.query_flag("pinned_only")
    body = m.Context(
        query=call.query_text("q", 1024),
        budget=call.query_int("budget", 0, 1_000_000),
        limit=call.query_int("limit", 1, 1000),
        pinned_only=pinned_only,
        include_recent=call.query_int("include_recent", 0, 1000) or 0,
        scope=call.query_text("scope", 256),
        cross_project=call.query_flag("cross_project"),
        format="json",
    )
    reply: ContextReply | PinnedReply = await call.run(body)
    tenant = call.principal.tenant
    if isinstance(reply, PinnedReply):
        pinned = [
            _entry(tenant, i, score=1.0, tokens=tokens(i.content), pinned=i.section == "pinned")
            for i in reply.items
        ]
        return json_response(wire.ContextResult(entries=pinned, tokens=reply.tokens))
    result = wire.ContextResult(
        entries=[_entry(tenant, i, score=i.score, tokens=tokens(i.framed)) for i in reply.memories],
        tokens=reply.tokens,
        active_snapshot=_plain(reply.snapshot),
        session_handoff=_plain(reply.handoff),
        recent_events=[_camel(e) for e in reply.events] or None,
    )
    return json_response(result)


def _entry(
    tenant: str, item: ContextMemory | PinnedItem, *, score: float, tokens: int, pinned: bool | None = None
) -> wire.ContextEntry:
    memory = wire.Memory(
        id=item.id,
        tenant_id=tenant,
        content=item.content,
        strength=item.strength if isinstance(item, ContextMemory) else None,
        confidence=item.confidence,
        tags=item.tags,
        created=item.created,
        pinned=pinned,
    )
    return wire.ContextEntry(
        entry=memory,
        score=score,
        tokens=tokens,
        is_global=item.source == "global",
        truncated=item.truncated,
        full_chars=item.full_chars,
    )


def _plain(value: Any) -> dict[str, Any] | None:
    return None if value is None else _camel(value)


def _camel(value: Any) -> dict[str, Any]:
    """A reply struct's fields with camelCase names, as the SDK's loose dicts expect."""
    fields = msgspec.structs.asdict(value)
    return {camel(k): v for k, v in fields.items()}


async def _tool(call: Call, tool: str, arguments: dict[str, Any]) -> Any:
    """An MCP tool's read, which these routes share with `hippoctl mcp`; its reply data."""
    reply: McpToolReply = await call.run(
        m.McpToolCall(tool=tool, arguments=arguments, session_key=call.principal.session)
    )
    return reply.result


async def assemble(call: Call) -> Response:
    session = call.path_id()
    arguments: dict[str, Any] = {"session_id": session}
    budget = call.query_int("budget", 1, 1_000_000)
    fresh = call.query_int("freshTail", 0, 1000)
    scope = call.query_text("scope", 256)
    if budget is not None:
        arguments["budget"] = budget
    if fresh is not None:
        arguments["fresh_tail_count"] = fresh
    if call.request.query_params.get("summarizeOlder") is not None:
        arguments["summarize_older"] = call.query_flag("summarizeOlder")
    if scope is not None:
        arguments["scope"] = scope
    reply: AssembleReply = await _tool(call, "hippo_assemble", arguments)
    items = [
        wire.AssembleItem(
            id=f"{i.kind}:{i.id}",
            content=i.text,
            created_at=i.created_at,
            strength=1.0,
            is_fresh_tail=i.full,
            is_summary=not i.full,
        )
        for i in reply.items
    ]
    result = wire.AssembleResult(
        session_id=reply.session_id,
        items=items,
        tokens=reply.tokens,
        total_raw=reply.total,
        summarized=reply.summarized,
        evicted=reply.left_out,
        truncated=reply.left_out > 0,
    )
    return json_response(result)


async def drill(call: Call) -> Response:
    summary = call.path_id()
    arguments: dict[str, Any] = {"summary_id": summary}
    for name, low, high in (("limit", 1, 1000), ("budget", 1, 1_000_000), ("depth", 1, 10)):
        value = call.query_int(name, low, high)
        if value is not None:
            arguments[name] = value
    reply: DrillReply = await _tool(call, "hippo_drill", arguments)
    children = [wire.DrillChild(id=p.id, depth=p.depth, content=p.first_line) for p in reply.parents]
    result = wire.DrillResult(
        parent={"id": reply.id, "depth": reply.depth},
        children=children,
        total_children=len(children) + reply.left_out,
        truncated=reply.left_out > 0,
    )
    return json_response(result)


async def sleep(call: Call) -> Response:
    given = await call.body(wire.SleepIn)
    reply: SleepReply = await call.run(m.Sleep(dry_run=given.dry_run, no_share=given.no_share))
    deduped = reply.deduped
    result = wire.SleepResult(
        active=reply.active,
        removed=reply.removed,
        merged_episodic=reply.merged,
        new_semantic=reply.semantic_created,
        dry_run=reply.dry_run,
        deduped={
            "episodic": deduped.episodic,
            "semantic": deduped.semantic,
            "crossLayer": deduped.cross_layer,
        },
        shared=reply.shared,
        went_dormant=reply.dormant_moved,
        open_conflicts=reply.conflicts.open,
        details=reply.details,
        merges=[
            wire.SleepMerge(semantic_id=g.semantic_id, members=g.members, text=g.text) for g in reply.merges
        ],
    )
    return json_response(result)


OPS = (
    Op(
        "GET",
        "/v1/context",
        context,
        "The context block for an agent's prompt, as entries; strengthens what it returns",
        query=(
            Param("q", {"type": "string", "maxLength": 1024}),
            Param("budget", _COUNT, description="tokens; 0 returns nothing"),
            Param("limit", {"type": "integer", "minimum": 1, "maximum": 1000}),
            Param("pinned_only", _FLAG),
            Param("include_recent", {"type": "integer", "minimum": 0, "maximum": 1000}),
            Param("scope", {"type": "string", "maxLength": 256}),
            Param("cross_project", _FLAG),
        ),
        ok=(200, wire.ContextResult),
    ),
    Op(
        "GET",
        "/v1/sessions/{id}/assemble",
        assemble,
        "One session's events and handoffs within a budget, newest in full",
        query=(
            Param("budget", {"type": "integer", "minimum": 1, "maximum": 1_000_000}),
            Param("freshTail", {"type": "integer", "minimum": 0, "maximum": 1000}),
            Param("summarizeOlder", _FLAG),
            Param("scope", {"type": "string", "maxLength": 256}),
        ),
        ok=(200, wire.AssembleResult),
    ),
    Op(
        "GET",
        "/v1/recall/drill/{id}",
        drill,
        "The memories a merged memory was made from",
        query=(
            Param("limit", {"type": "integer", "minimum": 1, "maximum": 1000}),
            Param("budget", {"type": "integer", "minimum": 1, "maximum": 1_000_000}),
            Param("depth", {"type": "integer", "minimum": 1, "maximum": 10}),
        ),
        ok=(200, wire.DrillResult),
    ),
    Op(
        "POST",
        "/v1/sleep",
        sleep,
        "Consolidate the store now (admin, from this machine only)",
        role="admin",
        loopback_only=True,
        body=wire.SleepIn,
        ok=(200, wire.SleepResult),
    ),
)
