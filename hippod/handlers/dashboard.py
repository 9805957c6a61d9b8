"""`dashboard`: open or close the read-only dashboard's loopback listener inside the daemon
(integrations.md §13). The browser is the client's to open."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import DashboardReply
from hippod.base.ports import check_port, first_port
from hippod.calls.request import RequestContext

DEFAULT_PORT = 3333


async def dashboard_start(ctx: RequestContext, body: m.DashboardStart) -> tuple[DashboardReply, str]:
    """Open the listener (or find the one open) and name the page for the request's store: the project
    store above its folder, else (or with --global) the global store."""
    check_port(body.port)
    state = ctx.state
    if state.dashboard is None:
        # The dashboard's code and the ASGI stack load here, the first time it opens.
        state.dashboard = state.new_dashboard()
    store = (await ctx.target_store(write=False)).root
    default = first_port(state.dashboard_config.get("port"), default=DEFAULT_PORT)
    reply = await state.dashboard.open(body.port, default, store, ctx.tenant)
    return reply, f"Dashboard on {reply.url} ({store})"


async def dashboard_stop(ctx: RequestContext, body: m.DashboardStop) -> tuple[DashboardReply, str]:
    listener = ctx.state.dashboard
    if listener is None or not listener.running:
        return DashboardReply(running=False), "The dashboard was not open."
    closed = await listener.close()
    return DashboardReply(running=False), f"Closed the dashboard on {closed.url}"
