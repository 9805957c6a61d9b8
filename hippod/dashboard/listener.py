"""The dashboard's listener inside the daemon: its own loopback port, opened by `dashboard` and closed
by `dashboard --stop` or at shutdown (integrations.md §13)."""

from __future__ import annotations

import logging
from urllib.parse import quote

from hippoctl.protocol.replies_http import DashboardReply
from hippod.base import clock, local_token
from hippod.base.errors import HippoError
from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import Dispatch
from hippod.dashboard import app
from hippod.dashboard.calls import Stores
from hippod.web import peer
from hippod.web.asgi_server import AsgiServer, bind, resolve, url
from hippod.web.connections import Bounds

log = logging.getLogger("hippod.dashboard")

HOST = "127.0.0.1"  # loopback only, always: the page shows memory text


class DashboardListener:
    """At most one per daemon. Opening it again from another store adds that store to the page."""

    def __init__(self, state: DaemonView, dispatch: Dispatch) -> None:
        self.state = state
        self.dispatch = dispatch
        self.server: AsgiServer | None = None
        self.port: int | None = None
        self.started_at: str | None = None
        self.stores = Stores("default", [])
        self.token: local_token.LocalToken | None = None

    @property
    def running(self) -> bool:
        return self.server is not None and self.server.running

    def reply(self, store: str | None = None) -> DashboardReply:
        """Where the page is; its URL names `store` unless that is the page's default."""
        if not self.running or self.port is None:
            return DashboardReply(running=False)
        roots = self.stores.roots
        store = store or roots[0]
        query = "" if store == roots[0] else f"?store={quote(store, safe='')}"
        # Where the daemon cannot see which user a connection is from, the page proves it with the
        # local token, handed over in the fragment (never sent to any server, dropped by the page).
        token = self.token.current() if self.token is not None else ""
        fragment = "" if peer.available() else f"#token={token}"
        return DashboardReply(
            running=True,
            url=f"{url(HOST, self.port)}/{query}{fragment}",
            port=self.port,
            started_at=self.started_at,
            store=store,
            stores=list(roots),
        )

    async def open(self, port: int | None, default_port: int, store: str, tenant: str) -> DashboardReply:
        """Listen on `port` (None: the one already open, else `default_port`; 0: any free one) and
        show `store`, as the tenant asking."""
        listen_port = default_port if port is None else port
        found = await resolve(HOST, listen_port)
        if self.running:
            if port not in (None, 0, self.port):
                raise HippoError(
                    "bad_state",
                    f"the dashboard is open on port {self.port}",
                    hint="hippoctl dashboard --stop, then open it again",
                )
            if tenant != self.stores.tenant:
                raise HippoError(
                    "bad_state",
                    f"the dashboard is open for tenant {self.stores.tenant}",
                    hint="hippoctl dashboard --stop, then open it again",
                )
            self._add(store)
            return self.reply(store)
        global_root = self.state.registry.global_root
        self.token = local_token.LocalToken(global_root)
        self.token.current()
        # The global store is always one click away; the store asked for comes first.
        self.stores = Stores(tenant, [store] if store == global_root else [store, global_root])
        built = app.build(self.state, self.dispatch, self.stores, self.token)
        bounds = Bounds.from_config(self.state.http_config)  # the HTTP API's bounds hold here too
        sock = bind(HOST, listen_port, found)
        self.port = sock.getsockname()[1]
        self.server = AsgiServer(built, sock, "dashboard", bounds)
        self.started_at = clock.iso(clock.now())
        log.info("dashboard listening on %s", url(HOST, self.port))
        return self.reply(store)

    def _add(self, store: str) -> None:
        # Appended: the page's default store, and so every URL given out before, stays what it was.
        if store not in self.stores.roots:
            self.stores.roots.append(store)

    async def close(self, within: float | None = None) -> DashboardReply:
        """Stop listening; requests in flight get a few seconds to finish (at most `within`).
        Returns what was open."""
        was = self.reply()
        if self.server is not None:
            await self.server.close(within)
        self.server, self.port, self.started_at = None, None, None
        if was.running:
            log.info("dashboard on %s closed", was.url)
        return was
