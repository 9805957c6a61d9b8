"""What a call sees of the daemon: its shared facts and the services the process sets up.

The daemon's state (hippod/daemon/state.py) is one of these; the handlers, the domain and the front
doors (web, dashboard, jobs) name it by these protocols, so none of them imports the process layer
or the services above them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from hippoctl.protocol.replies import DailyRunResult, ScheduleStatus
from hippoctl.protocol.replies_http import DashboardReply, ServeReply
from hippod.base.daily_time import DailyTime
from hippod.calls.hook_jobs import HookJobs
from hippod.store.stores import StoreRegistry

# Where a daily run sends the lines it streams to a client.
Say = Callable[[str], Awaitable[None]]


class HttpDoor(Protocol):
    """The HTTP API's listener (hippod/web/listener.py), opened by `serve`."""

    reply: ServeReply
    # The project whose store requests without X-Hippo-Store reach (None: the global store).
    project: str | None

    @property
    def running(self) -> bool: ...

    async def open(
        self, host: str, port: int, allow_remote: bool, project: str | None = None
    ) -> ServeReply: ...

    async def close(self, within: float | None = None) -> ServeReply: ...


class DashboardDoor(Protocol):
    """The dashboard's listener (hippod/dashboard/listener.py), opened by `dashboard`."""

    @property
    def running(self) -> bool: ...

    def reply(self, store: str | None = None) -> DashboardReply: ...

    async def open(self, port: int | None, default_port: int, store: str, tenant: str) -> DashboardReply: ...

    async def close(self, within: float | None = None) -> DashboardReply: ...


class DailyJob(Protocol):
    """The daily run (hippod/jobs/daily_run.py)."""

    @property
    def running(self) -> bool: ...

    async def run_or_join(self, trigger: str, say: Say | None = None) -> tuple[DailyRunResult, bool]: ...

    async def drain(self, timeout: float, unwind: float = 5.0) -> None: ...


class DailySchedule(Protocol):
    """When the daily run is due (hippod/jobs/schedule.py)."""

    at: DailyTime

    def status(self) -> ScheduleStatus: ...


class Watcher(Protocol):
    """The agent-note watcher (hippod/jobs/watchers.py)."""

    async def status(self) -> dict[str, list[str]]: ...

    async def stop(self) -> None: ...


class TeamOutbox(Protocol):
    """What delivers the writes queued for this user's team server (hippod/teamlink/sender.py)."""

    sent: int
    marks_sent: int
    last_error: str | None
    synced_at: str | None

    def wake(self) -> None: ...

    async def stop(self) -> None: ...


class DaemonView(Protocol):
    """Daemon-wide facts and services; one per process (hippod/daemon/state.py says what each is)."""

    registry: StoreRegistry
    socket: str
    log_file: str
    started_at: str
    started_monotonic: float
    loss_aversion: float
    socket_activated: bool
    connections: int
    pid: int
    shutdown: asyncio.Event
    sleep_runs: dict[tuple[str, bool], Any]
    sleep_locks: dict[str, asyncio.Lock]
    session_sleeps: dict[str, float]
    daily: DailyJob | None
    schedule: DailySchedule | None
    watcher: Watcher | None
    hook_jobs: HookJobs
    background: set[asyncio.Task[None]]
    http: HttpDoor | None
    http_config: dict[str, Any]
    dashboard: DashboardDoor | None
    dashboard_config: dict[str, Any]
    team_sender: TeamOutbox | None

    def new_http(self) -> HttpDoor:
        """A new HTTP listener (the ASGI stack loads only when one is made)."""
        ...

    def new_dashboard(self) -> DashboardDoor:
        """A new dashboard listener (its code and the ASGI stack load only when one is made)."""
        ...


async def open_http(
    state: DaemonView, host: str, port: int, allow_remote: bool, project: str | None = None
) -> ServeReply:
    """Open the HTTP API's listener, made the first time it opens (by `serve` or at start)."""
    if state.http is None:
        # The ASGI stack loads here, the first time a listener opens, and never on the client's path.
        state.http = state.new_http()
    return await state.http.open(host, port, allow_remote, project)
