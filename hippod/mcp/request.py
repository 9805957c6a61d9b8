"""The request context of one MCP tool call."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from hippod.calls.request import RequestContext


@dataclass
class McpContext(RequestContext):
    """A tool call: the last-batch key is the MCP process's own (`mcp:<pid>`), the audit actor `mcp`."""

    key: str = "-"

    @property
    def session_key(self) -> str:
        return self.key

    @property
    def actor(self) -> str:
        return "mcp"


def for_tool(ctx: RequestContext, key: str | None, *, global_store: bool = False) -> McpContext:
    """`ctx` as a tool call sees it, keyed by `key` ("-": no session); `global_store` forces the
    global store, as `--global` does. Warnings still reach the request's reply."""
    request = ctx.request
    if global_store and not request.global_store:
        request = msgspec.structs.replace(request, global_store=True)
    return McpContext(
        request=request, state=ctx.state, warnings=ctx.warnings, progress=ctx.progress, key=key or "-"
    )
