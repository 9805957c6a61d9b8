"""The request context of one MCP tool call."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from hippod.calls.request import RequestContext


@dataclass
class McpContext(RequestContext):
    """A tool call: the last-batch key is the MCP session's own (`mcp:<pid>` for a stdio process,
    `mcp:http:<key id>` over HTTP); the audit actor `mcp`, or `mcp:<the key's actor>` for a key
    holder, who acts within its tenant alone."""

    key: str = "-"
    by: str = "mcp"
    whole_store: bool = True

    @property
    def session_key(self) -> str:
        return self.key

    @property
    def actor(self) -> str:
        return self.by

    @property
    def owner(self) -> bool:
        return self.whole_store


def for_tool(ctx: RequestContext, key: str | None, *, global_store: bool = False) -> McpContext:
    """`ctx` as a tool call sees it, keyed by `key` ("-": no session); `global_store` forces the
    global store, as `--global` does. Warnings still reach the request's reply."""
    request = ctx.request
    if global_store and not request.global_store:
        request = msgspec.structs.replace(request, global_store=True)
    if isinstance(ctx, McpContext):
        by, whole_store = ctx.by, ctx.whole_store
    elif ctx.owner:
        by, whole_store = "mcp", True
    else:
        by, whole_store = f"mcp:{ctx.actor}", False
    return McpContext(
        request=request,
        state=ctx.state,
        warnings=ctx.warnings,
        progress=ctx.progress,
        key=key or "-",
        by=by,
        whole_store=whole_store,
    )
