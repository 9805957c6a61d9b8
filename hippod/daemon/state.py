"""What the whole daemon shares with every handler."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from hippod.base.errors import HippoError
from hippod.calls.daemon_view import DailyJob, DailySchedule, DashboardDoor, HttpDoor, TeamOutbox, Watcher
from hippod.calls.hook_jobs import HookJobs
from hippod.store.stores import StoreRegistry


def _no_listener() -> NoReturn:
    """What a state that no process set up answers when asked for a listener."""
    raise HippoError("bad_state", "this daemon has no way to open a listener")


@dataclass
class DaemonState:
    """Daemon-wide facts and services; one instance per process (a calls.daemon_view.DaemonView)."""

    registry: StoreRegistry
    socket: str
    log_file: str
    started_at: str
    started_monotonic: float
    loss_aversion: float = 1.0
    socket_activated: bool = False
    # Why daemon.json could not be used, told to every client while the daemon runs on the defaults.
    config_notice: str | None = None
    connections: int = 0
    pid: int = field(default_factory=os.getpid)
    shutdown: asyncio.Event = field(default_factory=asyncio.Event)
    # Sleeps under way, joined by key, and one lock per store root so two never overlap (sleep.md §1).
    sleep_runs: dict[tuple[str, bool], Any] = field(default_factory=dict)
    sleep_locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    # When the newest session-end sleep of each store root began (monotonic): it covers every
    # session end queued before then, whose own sleep is skipped.
    session_sleeps: dict[str, float] = field(default_factory=dict)
    # The daily run and its schedule (sleep.md §10); set up by app.serve.
    daily: DailyJob | None = None
    schedule: DailySchedule | None = None
    # The agent-note watcher (daemon.md §11); set up by app.serve, None when watch.enabled is false.
    watcher: Watcher | None = None
    # Work a hook request left after its reply (the session-end job), kept in the spool until done.
    hook_jobs: HookJobs = field(default_factory=HookJobs)
    # Other work started without a request (an automatic sleep), waited for within the grace period.
    background: set[asyncio.Task[None]] = field(default_factory=set)
    # The HTTP listener (hippod.web.listener.HttpListener), made by the first `serve` with `new_http`:
    # its module and the ASGI stack are imported only then.
    http: HttpDoor | None = None
    # daemon.json's `http` section (host, port, autostart, the listeners' bounds), read at start.
    http_config: dict[str, Any] = field(default_factory=dict)
    # The dashboard's listener (hippod.dashboard.listener.DashboardListener), made by the first
    # `dashboard` with `new_dashboard`: the dashboard's code and the ASGI stack are imported only then.
    dashboard: DashboardDoor | None = None
    # daemon.json's `dashboard` section (port), read at start.
    dashboard_config: dict[str, Any] = field(default_factory=dict)
    # Delivers the writes queued for this user's team server (teamlink/sender.py); set up by app.serve.
    team_sender: TeamOutbox | None = None
    # Make the listeners above; set by app.new_state, which knows their modules.
    new_http: Callable[[], HttpDoor] = _no_listener
    new_dashboard: Callable[[], DashboardDoor] = _no_listener
