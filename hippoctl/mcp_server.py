"""`hippoctl mcp`: an MCP server over stdio on the official SDK (integrations.md §11).

Each tool call becomes one `McpToolCall` request to the daemon, made in a worker thread so the event
loop keeps serving the client. The reply's text is the tool's text content; a daemon `Error` is a
tool error (`isError`); a daemon that cannot be reached is the JSON-RPC error -32000. Only protocol
messages reach stdout: the SDK points fd 1 at stderr while it serves, and logging goes to stderr.
stdin is read through mcp_stdio, which refuses text that is not UTF-8 and answers a line that is no
JSON-RPC message.

This module (and the SDK, about 0.7 s to import) is loaded for the `mcp` verb only; the server and
its tools are hippoctl/protocol/mcp_tools.py's, which the daemon's `POST /mcp` serves too.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from hippoctl import mcp_stdio
from hippoctl.client import ClientError, call, request_envelope
from hippoctl.protocol import errors
from hippoctl.protocol import messages as m
from hippoctl.protocol.mcp_tools import build_server

UNREACHABLE = -32000  # JSON-RPC's server-error range: the daemon could not be reached
CALL_TIMEOUT = 60.0  # per wait for a daemon message; long jobs send progress every 5 s


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

    async def forward(self, tool: str, arguments: dict[str, Any], _request: Any = None) -> str:
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
