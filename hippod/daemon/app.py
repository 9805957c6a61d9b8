"""The running daemon: bind last, serve, and stop gracefully (daemon.md §4, §13)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import sys
import time
from typing import Any

from hippod.base import clock, daemon_state, file_limits
from hippod.base.errors import HippoError
from hippod.base.ports import port_setting
from hippod.calls.daemon_view import DashboardDoor, HttpDoor, open_http
from hippod.daemon import gc_policy, start_heal
from hippod.daemon.dispatch import dispatch
from hippod.daemon.listeners import ListenError, listen, watch_signals
from hippod.daemon.sd_notify import notify
from hippod.daemon.server import Server
from hippod.daemon.state import DaemonState
from hippod.daemon.stopping import StopClock, arm_exit
from hippod.jobs import spool_replay
from hippod.jobs.auto_sleep import AutoSleep
from hippod.jobs.schedule import start_schedule
from hippod.jobs.watchers import start_watchers
from hippod.teamlink.sender import TeamSender

log = logging.getLogger("hippod.app")


async def serve(state: DaemonState, config: dict[str, Any]) -> int:
    """Bind the socket, serve until asked to stop, then shut down in order. Returns the exit code."""
    loop = asyncio.get_running_loop()
    file_limits.quiet_accept_failures(loop)
    raised = file_limits.raise_soft_limit()
    if raised is not None:
        log.info("open-file limit raised from %d to %d", *raised)
    server = Server(state, int(config["maxFrameBytes"]))
    state.hook_jobs.concurrency = int(config["jobConcurrency"])
    state.http_config = dict(config["http"])
    state.dashboard_config = dict(config["dashboard"])
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals > 1:
            # A second signal during shutdown: leave now; WAL keeps every database consistent.
            os._exit(1)
        state.shutdown.set()

    watch_signals(loop, on_signal)

    team_dsn = config["team"].get("dsn")
    if team_dsn:
        # A team server: its one store is the team's database, open before any request is served.
        try:
            team = config["team"]
            await state.registry.open_team(
                str(team_dsn), pool_max=int(team["poolMax"]), wait=float(team["waitSeconds"])
            )
        except HippoError as exc:
            log.error("%s", exc.message)
            print(f"hippod: {exc.message}", file=sys.stderr)
            return 1
    schedule = start_schedule(state, config)
    state.registry.listeners.append(AutoSleep(state).notice)
    try:
        listener = await listen(state, server.handle)
    except ListenError as exc:
        log.error("%s", exc)
        print(f"hippod: {exc}", file=sys.stderr)
        schedule.stop()
        return 1
    log.info("listening on %s (pid %d)", state.socket, state.pid)
    notify("READY=1")
    gc_policy.tune()
    state.watcher = start_watchers(state, config)
    if not team_dsn:
        # A laptop: what it queued for its team server goes out from now on (a team server has none).
        state.team_sender = TeamSender(state)
        state.team_sender.start()
        # Opening a store heals its mirrors: a rejected text a killed daemon left on disk goes now.
        start_heal.start(state)
    # After binding, so hook verbs arriving meanwhile are served live (daemon.md §4.10).
    spool = spool_replay.start(state, config, dispatch)
    await _autostart_http(state)

    idle_minutes = float(config["storeIdleCloseMinutes"])
    sweeper = loop.create_task(_close_idle_stores(state, idle_minutes * 60.0)) if idle_minutes > 0 else None

    await state.shutdown.wait()
    log.info("shutting down")
    # Everything below shares the grace, counted from now; the process is gone soon after it.
    stop = StopClock(float(config["shutdownGraceSeconds"]))
    arm_exit(stop)
    # What is committed but not yet embedded is embedded after the next start.
    state.registry.stop_embedding()
    server.stopping = True
    listener.close()
    # The HTTP and dashboard listeners live and die with the daemon; requests in flight may finish.
    if state.http is not None:
        await state.http.close(stop.left())
    if state.dashboard is not None:
        await state.dashboard.close(stop.left())
    schedule.stop()
    if state.team_sender is not None:
        await state.team_sender.stop()
    if state.watcher is not None:
        await state.watcher.stop()
    # A replay under way finishes; files not yet replayed stay in the spool for the next start,
    # and so do the hook jobs not started yet (daemon.md §13.3).
    await spool.stop()
    state.hook_jobs.close()
    listener.remove()
    if sweeper is not None:
        # It returns once it sees the shutdown, never halfway through closing a store.
        await sweeper
    await _finish(set(server.inflight), stop)
    # Running hook jobs share the grace period too; one cancelled then stays in the spool.
    await state.hook_jobs.drain(stop.left(), stop.unwind())
    # A cancelled automatic sleep rolls back what it has not committed.
    await _finish(set(state.background), stop)
    if state.daily is not None:
        # The running daily run shares the one grace period with the requests.
        await state.daily.drain(stop.left(), stop.unwind())
    await state.registry.close_all(stop.close_by())
    write_state(state)
    notify("STOPPING=1")
    log.info("stopped")
    return 0


async def _finish(tasks: set[asyncio.Task[Any]], stop: StopClock) -> None:
    """Let these tasks finish within the grace, then cancel the rest and give them a moment to end."""
    if not tasks:
        return
    _, pending = await asyncio.wait(tasks, timeout=stop.left())
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=stop.unwind())


async def _close_idle_stores(state: DaemonState, max_idle_seconds: float) -> None:
    """Close project stores unused for a while, checking once a minute, until shutdown (daemon.md §5.5)."""
    while not state.shutdown.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(state.shutdown.wait(), min(60.0, max_idle_seconds))
        if not state.shutdown.is_set():
            await state.registry.close_idle(max_idle_seconds)


def write_state(state: DaemonState) -> None:
    """daemon-state.json: when this daemon ran, for the next one (other keys in it are kept)."""
    try:
        daemon_state.update(
            state.registry.global_root,
            last_started_at=state.started_at,
            last_stopped_at=clock.iso(clock.now()),
            pid=state.pid,
        )
    except OSError:
        log.exception("could not write daemon-state.json")


def new_state(registry: Any, socket_path: str, log_file: str, loss_aversion: float) -> DaemonState:
    state = DaemonState(
        registry=registry,
        socket=socket_path,
        log_file=log_file,
        started_at=clock.iso(clock.now()),
        started_monotonic=time.monotonic(),
        loss_aversion=loss_aversion,
    )
    state.new_http = functools.partial(_http_listener, state)
    state.new_dashboard = functools.partial(_dashboard_listener, state)
    return state


def _http_listener(state: DaemonState) -> HttpDoor:
    """The HTTP API's listener, its requests run through the one dispatcher."""
    # Imported here: the ASGI stack loads when the first listener opens, never on the client's path.
    from hippod.web.listener import HttpListener

    return HttpListener(state, dispatch)


def _dashboard_listener(state: DaemonState) -> DashboardDoor:
    """The dashboard's listener, whose views run verbs through the one dispatcher."""
    # Imported here: the dashboard's code and the ASGI stack load when it first opens.
    from hippod.dashboard.listener import DashboardListener

    return DashboardListener(state, dispatch)


async def _autostart_http(state: DaemonState) -> None:
    """daemon.json `http.autostart`: open the listener as the daemon starts; a failure is logged."""
    http = state.http_config
    if http.get("autostart") is not True:
        return
    host = str(http.get("host") or "127.0.0.1")
    try:
        await open_http(state, host, port_setting(http), bool(http.get("allowRemote", False)))
    except HippoError as exc:
        logging.getLogger("hippod.serve").warning("http.autostart: %s", exc.message)
