"""One request to one of the dashboard's JSON views: which store it reads (one the dashboard was
opened for, or the global store), its query values checked, and a request context that runs the
daemon's own handlers as the local user, under the dashboard's name."""

from __future__ import annotations

import asyncio
import os
import shlex
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from hippoctl.protocol import messages as m
from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import Dispatch, RequestContext
from hippod.store.stores import SqliteStore, Store, sqlite_only
from hippod.web.errors import HttpError

PAGE_SIZE = 50
MAX_PAGE = 10_000


@dataclass
class DashboardContext(RequestContext):
    """A handler's view of a dashboard read: its last recalled batch and audit rows are the
    dashboard's own, never those of the CLI's session."""

    @property
    def actor(self) -> str:
        return "dashboard"

    @property
    def session_key(self) -> str:
        return "dashboard"


@dataclass
class Stores:
    """What one open dashboard shows: its tenant, the stores it can show (the first is the default),
    and what its views keep between requests (the map's strength readings), dropped when it closes."""

    tenant: str
    roots: list[str]
    kept: dict[Any, Any] = field(default_factory=dict)
    # Held while a view makes what it keeps, so two requests at once make it once.
    making: asyncio.Lock = field(default_factory=asyncio.Lock)


def context_for(state: DaemonView, root: str, tenant: str, body: m.RequestBody) -> DashboardContext:
    """A context whose store is `root`: the global store, or the project whose .hippo folder it is."""
    is_global = root == state.registry.global_root
    cwd = "/" if is_global else os.path.dirname(root)
    request = m.Request(id=0, cwd=cwd, body=body, tenant=tenant, global_store=is_global)
    return DashboardContext(request=request, state=state)


def command(store: Store, *words: str) -> str:
    """A hippoctl command line acting on this store, to copy into any shell."""
    line = " ".join(shlex.quote(w) for w in words)
    if store.kind == "global":
        return f"hippoctl {line} --global"
    return f"hippoctl -C {shlex.quote(os.path.dirname(store.root))} {line}"


class ViewCall:
    """What a view function gets: the checked query and the way to its store."""

    def __init__(self, request: Request, state: DaemonView, dispatch: Dispatch, stores: Stores) -> None:
        self.request = request
        self.state = state
        # The daemon's dispatcher, for a view that runs a verb's own handler.
        self.dispatch = dispatch
        self.stores = stores
        self.tenant = stores.tenant
        named = request.query_params.get("store")
        if named is None:
            self.root = stores.roots[0]
        elif named in stores.roots:
            self.root = named
        else:
            raise HttpError(400, "bad_request", "store must be one of the stores the dashboard shows")

    def context(self, body: m.RequestBody) -> DashboardContext:
        return context_for(self.state, self.root, self.tenant, body)

    async def store(self) -> SqliteStore:
        """The store this view reads (a project store that is gone reads as the global store); the
        dashboard is a laptop's, never a team server's."""
        return sqlite_only(await self.context(m.Status()).target_store(write=False), "the dashboard")

    def text(self, name: str, max_chars: int = 500) -> str | None:
        value = self.request.query_params.get(name)
        if value is not None and (len(value) > max_chars or "\x00" in value):
            raise HttpError(400, "bad_request", f"{name} must be at most {max_chars} characters")
        return value or None

    def choice(self, name: str, options: tuple[str, ...], default: str | None) -> str | None:
        value = self.text(name, 64)
        if value is None:
            return default
        if value not in options:
            raise HttpError(400, "bad_request", f"{name} must be one of {', '.join(options)}")
        return value

    def number(self, name: str, default: int, low: int, high: int) -> int:
        value = self.text(name, 16)
        if value is None:
            return default
        if not value.isdigit() or not low <= int(value) <= high:
            raise HttpError(400, "bad_request", f"{name} must be a whole number from {low} to {high}")
        return int(value)

    def page(self) -> int:
        return self.number("page", 0, 0, MAX_PAGE)


def pages(count: int, size: int = PAGE_SIZE) -> int:
    """How many pages `count` rows fill (at least one, empty)."""
    return max(1, -(-count // size))
