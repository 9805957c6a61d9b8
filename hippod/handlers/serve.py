"""`serve`: open or close the HTTP API's listener inside the daemon (integrations.md §9.1)."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import ServeReply
from hippod.base.ports import check_port, port_setting
from hippod.calls.daemon_view import open_http
from hippod.calls.request import RequestContext


async def serve(ctx: RequestContext, body: m.Serve) -> tuple[ServeReply, str]:
    state = ctx.state
    if body.stop:
        if state.http is None or not state.http.running:
            return ServeReply(running=False), "No HTTP listener was open."
        closed = await state.http.close()
        return ServeReply(running=False), f"Stopped serving on {closed.url}"
    check_port(body.port)
    http = state.http_config
    host = body.host or str(http.get("host") or "127.0.0.1")
    port = body.port if body.port is not None else port_setting(http)
    # Served from inside a project, the listener serves that project's store (and merges the global
    # store into reads), as the original's `hippo serve` does; else the global store.
    project = None if ctx.request.global_store else state.registry.project_root_for(ctx.request.cwd)
    reply = await open_http(state, host, port, body.allow_remote, project)
    return reply, f"Serving on {reply.url} ({reply.store})"
