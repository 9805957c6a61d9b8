"""`serve`: open or close the HTTP API's listener inside the daemon (integrations.md §9.1)."""

from __future__ import annotations

import logging
import os
from typing import Any

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import ServeReply
from hippod.base.errors import HippoError
from hippod.base.ports import check_port, first_port
from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import RequestContext

log = logging.getLogger("hippod.serve")

DEFAULT_PORT = 6789


def port_setting(http: dict[str, Any]) -> int:
    """The listener's port when `serve` names none: HIPPO_PORT, else daemon.json http.port, else 6789."""
    return first_port(os.environ.get("HIPPO_PORT"), http.get("port"), default=DEFAULT_PORT)


async def open_listener(
    state: DaemonView, host: str, port: int, allow_remote: bool, project: str | None = None
) -> ServeReply:
    if state.http is None:
        # The ASGI stack loads here, the first time a listener opens, and never on the client's path.
        state.http = state.new_http()
    return await state.http.open(host, port, allow_remote, project)


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
    reply = await open_listener(state, host, port, body.allow_remote, project)
    return reply, f"Serving on {reply.url} ({reply.store})"


async def autostart(state: DaemonView) -> None:
    """daemon.json `http.autostart`: open the listener as the daemon starts; a failure is logged."""
    http = state.http_config
    if http.get("autostart") is not True:
        return
    host = str(http.get("host") or "127.0.0.1")
    try:
        await open_listener(state, host, port_setting(http), bool(http.get("allowRemote", False)))
    except HippoError as exc:
        log.warning("http.autostart: %s", exc.message)
