"""One MCP tool call from `hippoctl mcp` (integrations.md §11)."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def mcp_tool_call(ctx: RequestContext, body: m.McpToolCall) -> tuple[object, str]:
    raise HippoError("not_available", "mcp tool call is not available yet")
