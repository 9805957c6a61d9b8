"""The `/mcp` route (integrations.md §9's table: member role): the caller checked as on every other
route, then the request handed to the MCP transport (web/mcp_http.py), which is loaded, off the
event loop, by the first request that gets this far."""

from __future__ import annotations

import asyncio
import importlib
from typing import TYPE_CHECKING

from starlette.types import Receive, Scope, Send

from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import Dispatch
from hippod.web.auth import PRINCIPAL, Authenticator
from hippod.web.errors import HttpError
from hippod.web.routing import error_response

if TYPE_CHECKING:
    from hippod.web.mcp_http import McpHttp

PATH = "/mcp"
METHODS = ["POST", "GET", "DELETE"]  # GET and DELETE: the SDK answers them (405: no session here)


class McpDoor:
    """An ASGI endpoint: the key checked, its principal kept in the scope, the transport run."""

    def __init__(self, state: DaemonView, dispatch: Dispatch, authenticator: Authenticator) -> None:
        self.state = state
        self.dispatch = dispatch
        self.authenticator = authenticator
        self._transport: McpHttp | None = None
        self._loading = asyncio.Lock()
        self._closed = False

    async def _opened(self) -> McpHttp:
        async with self._loading:
            if self._transport is None:
                # The SDK is about 0.7 s of imports: a thread takes them, the loop serves on.
                module = await asyncio.to_thread(importlib.import_module, "hippod.web.mcp_http")
                self._transport = module.McpHttp(self.state, self.dispatch)
            return self._transport

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            if self._closed:
                raise HttpError(503, "unavailable", "the HTTP API is closing")
            headers = [v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"]
            principal = await self.authenticator.principal(scope, headers)
        except HttpError as exc:
            await error_response(exc.status, exc.code, exc.message, exc.headers)(scope, receive, send)
            return
        transport = await self._opened()
        scope[PRINCIPAL] = principal
        await transport.handle(scope, receive, send)

    async def close(self) -> None:
        """Stop the transport's task group (the listener is closing)."""
        self._closed = True
        if self._transport is not None:
            await self._transport.close()
