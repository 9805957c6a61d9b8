"""The HTTP listener inside the daemon: uvicorn serving the app on the daemon's own event loop,
opened by `serve` (or daemon.json `http.autostart`) and closed by `serve --stop` or at shutdown."""

from __future__ import annotations

import logging
import os

from hippoctl.protocol.replies_http import ServeReply
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import Dispatch
from hippod.web import app
from hippod.web.asgi_server import AsgiServer, bind, resolve, url
from hippod.web.auth import Authenticator
from hippod.web.connections import Bounds
from hippod.web.mcp_door import McpDoor

log = logging.getLogger("hippod.web")

LOOPBACK_NAMES = ("127.0.0.1", "::1", "localhost")


class HttpListener:
    """At most one listener per daemon."""

    def __init__(self, state: DaemonView, dispatch: Dispatch) -> None:
        self.state = state
        self.dispatch = dispatch
        self.server: AsgiServer | None = None
        self.mcp: McpDoor | None = None
        self.reply = ServeReply(running=False)
        # The project whose store requests without X-Hippo-Store reach (None: the global store).
        self.project: str | None = None

    @property
    def running(self) -> bool:
        return self.server is not None and self.server.running

    async def open(self, host: str, port: int, allow_remote: bool, project: str | None = None) -> ServeReply:
        """Listen on host:port; `project` is the project store (its .hippo folder) requests reach
        without X-Hippo-Store, None for the global store."""
        if host not in LOOPBACK_NAMES and not allow_remote:
            raise HippoError(
                "usage",
                f"refusing to listen on {host}: without --allow-remote only loopback "
                "(127.0.0.1, ::1, localhost)",
            )
        found = await resolve(host, port)
        store = project or self.state.registry.global_root
        if (
            self.running
            and host == self.reply.host
            and port in (0, self.reply.port)
            and store == self.reply.store
        ):
            return self.reply  # what is asked is what already runs
        if self.running:
            raise HippoError(
                "bad_state",
                f"already serving on {self.reply.url}",
                hint="hippoctl serve --stop, then serve again",
            )
        registry = self.state.registry
        authenticator = Authenticator(registry, allow_remote=allow_remote, team=registry.team is not None)
        mcp = McpDoor(self.state, self.dispatch, authenticator)
        asgi = app.build(self.state, self.dispatch, authenticator, mcp)
        bounds = Bounds.from_config(self.state.http_config)
        sock = bind(host, port, found)  # last: nothing after it can fail and leave the port taken
        bound_port = sock.getsockname()[1]
        self.server = AsgiServer(asgi, sock, "HTTP", bounds)
        self.mcp = mcp
        self.reply = ServeReply(
            running=True,
            url=url(host, bound_port),
            host=host,
            port=bound_port,
            allow_remote=allow_remote,
            started_at=clock.iso(clock.now()),
            store=store,
        )
        self.project = os.path.dirname(project) if project is not None else None
        log.info("HTTP API listening on %s%s", self.reply.url, " (remote allowed)" if allow_remote else "")
        return self.reply

    async def close(self, within: float | None = None) -> ServeReply:
        """Stop listening; requests in flight get a few seconds to finish (at most `within`)."""
        was = self.reply
        if self.server is not None:
            await self.server.close(within)
        if self.mcp is not None:
            await self.mcp.close()
        self.server = None
        self.mcp = None
        self.reply = ServeReply(running=False)
        if was.running:
            log.info("HTTP API on %s closed", was.url)
        return was
