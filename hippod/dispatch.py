"""One place that maps each request body type to its handler."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippod.handlers import admin, embed, memory, recall
from hippod.request import RequestContext


async def dispatch(ctx: RequestContext) -> tuple[Any, str]:
    """Run the handler for this request's body; returns (reply data, text)."""
    match ctx.request.body:
        case m.Ping() as body:
            return await admin.ping(ctx, body)
        case m.DaemonStatus() as body:
            return await admin.daemon_status(ctx, body)
        case m.Shutdown() as body:
            return await admin.shutdown(ctx, body)
        case m.Init() as body:
            return await admin.init(ctx, body)
        case m.Status() as body:
            return await admin.status(ctx, body)
        case m.Remember() as body:
            return await memory.remember(ctx, body)
        case m.Recall() as body:
            return await recall.recall(ctx, body)
        case m.Inspect() as body:
            return await memory.inspect(ctx, body)
        case m.Forget() as body:
            return await memory.forget(ctx, body)
        case m.Outcome() as body:
            return await memory.outcome(ctx, body)
        case m.Embed() as body:
            return await embed.embed(ctx, body)
    raise AssertionError(f"no handler for {type(ctx.request.body).__name__}")
