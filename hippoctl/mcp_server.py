"""`hippoctl mcp`: an MCP server over stdio on the official SDK (integrations.md §11).

Each tool call becomes one `McpToolCall` request to the daemon, made in a worker thread so the event
loop keeps serving the client. The reply's text is the tool's text content; a daemon `Error` is a
tool error (`isError`); a daemon that cannot be reached is the JSON-RPC error -32000. Only protocol
messages reach stdout: the SDK points fd 1 at stderr while it serves, and logging goes to stderr.
stdin is read through mcp_stdio, which refuses text that is not UTF-8 and answers a line that is no
JSON-RPC message.

This module (and the SDK, about 0.7 s to import) is loaded for the `mcp` verb only.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.shared.exceptions import MCPError

from hippoctl import __version__, mcp_stdio
from hippoctl.client import ClientError, call, request_envelope
from hippoctl.mcp_specs import TOOLS
from hippoctl.protocol import errors
from hippoctl.protocol import messages as m

SERVER_NAME = "hippod"
UNREACHABLE = -32000  # JSON-RPC's server-error range: the daemon could not be reached
CALL_TIMEOUT = 60.0  # per wait for a daemon message; long jobs send progress every 5 s
CONTEXT_ARG = "mcp_context"
INSTRUCTIONS = (
    "hippod is the user's long-term memory for coding work. Call hippo_recall (or hippo_context) "
    "before a task to get relevant lessons, hippo_remember when you learn something worth keeping, "
    "and hippo_outcome to say whether recalled memories helped."
)

Forward = Callable[[str, dict[str, Any]], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Daemon:
    """Where tool calls go: the daemon, for this process's cwd and store choice."""

    cwd: str
    global_store: bool
    spawn: bool
    session_key: str

    def _call(self, tool: str, arguments: dict[str, Any]) -> m.Result | m.Error:
        body = m.McpToolCall(tool=tool, arguments=arguments, session_key=self.session_key)
        request = request_envelope(body, cwd=self.cwd, global_store=self.global_store)
        return call(request, spawn=self.spawn, timeout=CALL_TIMEOUT)

    async def forward(self, tool: str, arguments: dict[str, Any]) -> str:
        """One tool call's text; raises ToolError for a failed call, MCPError(-32000) when unreachable."""
        try:
            reply = await asyncio.to_thread(self._call, tool, arguments)
        except ClientError as exc:
            if exc.exit_code == errors.UNREACHABLE:
                raise MCPError(UNREACHABLE, f"hippod is unreachable: {exc}") from None
            raise ToolError(str(exc)) from None
        if isinstance(reply, m.Error):
            if errors.exit_code_for(reply.code) == errors.UNREACHABLE:
                raise MCPError(UNREACHABLE, f"hippod is unreachable: {reply.message}")
            hint = f" (try: {reply.hint})" if reply.hint else ""
            raise ToolError(reply.message + hint)
        # Warnings (e.g. "no project store here; using the global store") are for the agent too.
        return "\n".join(part for part in (reply.text, *reply.warnings) if part)


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
        supplied = _supplied(kwargs.pop(CONTEXT_ARG))
        # An argument the tool does not take goes along as sent: the daemon names it in its error.
        return await forward(name, {key: kwargs.get(key, value) for key, value in supplied.items()})

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
    return MCPServer(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        tools=[tool(spec, forward) for spec in TOOLS],
    )


def _log_to_stderr() -> None:
    """Warnings and worse to stderr, the SDK's INFO lines included; set before the SDK's own set-up,
    which then leaves the root logger alone."""
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="hippoctl mcp: %(levelname)s %(name)s: %(message)s"
    )


def run(*, cwd: str, global_store: bool, spawn: bool) -> int:
    """Serve MCP on stdin/stdout until the client closes stdin; returns the exit code."""
    _log_to_stderr()
    daemon = Daemon(cwd=cwd, global_store=global_store, spawn=spawn, session_key=f"mcp:{os.getpid()}")
    server = build_server(daemon.forward)
    # stdin is screened first: text that is not UTF-8 is refused, a line that is no message answered.
    asyncio.run(mcp_stdio.serve(server, sys.stdin.buffer))
    return errors.OK
