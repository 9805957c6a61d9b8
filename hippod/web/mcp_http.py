"""MCP over HTTP (`POST /mcp`, integrations.md §9, §11): the SDK's streamable-HTTP transport,
stateless with JSON responses, serving the server `hippoctl mcp` serves (hippoctl/protocol/mcp_tools.py).

Each tool call runs in the daemon as the `McpToolCall` a `hippoctl mcp` process would send, in the
tenant of the key that made the HTTP request (its principal, put in the request's scope by
web/mcp_door.py) and the store that request names (X-Hippo-Store, as the other routes). A refused
call is a tool error (`isError`) with the daemon's message; nothing a tool does answers 500.

Loaded by the first request to /mcp (the SDK costs about 0.7 s to import), never by a daemon whose
listener is closed or that is never asked for MCP.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from hippoctl.protocol import messages as m
from hippoctl.protocol.mcp_tools import build_server
from hippod.base.errors import HippoError, log_failure
from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import Dispatch
from hippod.web.auth import PRINCIPAL, Principal
from hippod.web.errors import HttpError
from hippod.web.guard import MAX_BODY
from hippod.web.routing import Call

log = logging.getLogger("hippod.web")


def session_key(principal: Principal) -> str:
    """Whose last recalled batch hippo_outcome marks without ids: one per key, apart from the
    REST routes' (`http:<key id>`) and from each stdio process's (`mcp:<pid>`)."""
    return f"mcp:http:{principal.key_id or 'localhost'}"


class McpHttp:
    """The SDK's session manager with its task group kept open on a task of the daemon's loop."""

    def __init__(self, state: DaemonView, dispatch: Dispatch) -> None:
        self.state = state
        self.dispatch = dispatch
        self.manager = StreamableHTTPSessionManager(
            build_server(self.forward)._lowlevel_server,  # what streamable_http_app runs; no public handle
            json_response=True,
            stateless=True,
            max_request_body_size=MAX_BODY,
        )
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            async with self.manager.run():
                self._ready.set()
                await self._stop.wait()
        except Exception as exc:
            log_failure("the MCP endpoint", exc)
        finally:
            self._ready.set()

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._ready.wait()
        await self.manager.handle_request(scope, receive, send)

    async def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(self._task), 5)
        if not self._task.done():
            self._task.cancel()

    async def forward(self, tool: str, arguments: dict[str, Any], request: Any) -> str:
        """One tool call's text, run through the daemon's dispatcher as the HTTP caller."""
        assert isinstance(request, Request), "POST /mcp serves HTTP requests only"
        principal: Principal = request.scope[PRINCIPAL]
        body = m.McpToolCall(tool=tool, arguments=arguments, session_key=session_key(principal))
        try:
            ctx = Call(request, self.state, self.dispatch, principal).context(body)
            _data, text = await self.dispatch(ctx)
            await self.state.registry.settled()  # recall's strengthening is in before the answer
        except HippoError as exc:
            hint = f" (try: {exc.hint})" if exc.hint else ""
            raise ToolError(exc.message + hint) from None
        except HttpError as exc:
            raise ToolError(exc.message) from None
        except Exception as exc:
            log_failure(f"POST /mcp {tool}", exc)
            raise ToolError("internal error; the daemon's log has the details") from None
        # Warnings (e.g. "no project store here; using the global store") are for the agent too.
        return "\n".join(part for part in (text, *ctx.warnings) if part)
