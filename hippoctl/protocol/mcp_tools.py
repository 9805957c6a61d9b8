"""The MCP server both transports serve (integrations.md §11): `hippoctl mcp` on stdio and the
daemon's `POST /mcp`, built on the official SDK from the signatures in mcp_specs, so the two announce
the same tools with the same schemas. Where a call goes is the transport's `Forward`.

This module (and the SDK, about 0.7 s to import) is loaded by those two alone.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools.base import Tool

from hippoctl.protocol.mcp_specs import TOOLS
from hippoctl.protocol.package import __version__

SERVER_NAME = "hippod"
CONTEXT_ARG = "mcp_context"
INSTRUCTIONS = (
    "hippod is the user's long-term memory for coding work. Call hippo_recall (or hippo_context) "
    "before a task to get relevant lessons, hippo_remember when you learn something worth keeping, "
    "and hippo_outcome to say whether recalled memories helped."
)

# (tool, the arguments the client gave, the transport's request: None on stdio, the HTTP request
# over HTTP) -> the tool's text. Raises the SDK's ToolError for a failed call.
Forward = Callable[[str, dict[str, Any], Any], Awaitable[str]]


def _supplied(context: Context) -> dict[str, Any]:
    """The arguments exactly as the client sent them (names and raw values)."""
    params = context.request_context.params or {}
    arguments = params.get("arguments")
    return arguments if isinstance(arguments, dict) else {}


def tool(spec: Callable[..., None], forward: Forward) -> Tool:
    """The SDK tool for one signature in mcp_specs: the SDK builds the schema from the signature and
    checks the arguments against it; the call forwards only the arguments the client gave (checked
    values, under their wire names), so left-out ones take the store's configured defaults."""
    name = spec.__name__
    signature = inspect.signature(spec, eval_str=True)
    context = inspect.Parameter(CONTEXT_ARG, inspect.Parameter.KEYWORD_ONLY, annotation=Context)

    async def run(**kwargs: Any) -> str:
        mcp_context: Context = kwargs.pop(CONTEXT_ARG)
        supplied = _supplied(mcp_context)
        # An argument the tool does not take goes along as sent: the daemon names it in its error.
        arguments = {key: kwargs.get(key, value) for key, value in supplied.items()}
        return await forward(name, arguments, mcp_context.request_context.request)

    run.__name__ = name
    # A tool argument named `global` cannot be a Python parameter: the call takes **kwargs, and the
    # signature the SDK reads is the spec's (whose `global_` has the alias `global`).
    run.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), context]
    )
    return Tool.from_function(
        run,
        name=name,
        description=inspect.cleandoc(spec.__doc__ or ""),
        context_kwarg=CONTEXT_ARG,
        structured_output=False,
    )


def build_server(forward: Forward) -> MCPServer[Any]:
    """The server with every tool of mcp_specs, in the order tools/list gives them."""
    return MCPServer(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        tools=[tool(spec, forward) for spec in TOOLS],
    )
