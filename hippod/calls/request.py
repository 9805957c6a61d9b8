"""A request as handlers see it: envelope fields, store resolution and reply warnings."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from hippoctl.protocol.body import verb_words
from hippoctl.protocol.errors import NOT_ON_TEAM_STORE
from hippoctl.protocol.messages import Request
from hippod.base.errors import HippoError
from hippod.base.pathtags import path_tags
from hippod.calls.daemon_view import DaemonView
from hippod.store.sqlite import sqlite_errors
from hippod.store.stores import Store


@dataclass
class RequestContext:
    """One request's envelope plus the daemon state, with helpers to reach its stores."""

    request: Request
    state: DaemonView
    warnings: list[str] = field(default_factory=list)
    # The client's exit status for a reply that carries data yet reports a failure (daemon.md §9).
    exit_code: int = 0
    # Sends one progress frame to the client (line, stream, done, total); a client that has gone
    # away is not an error.
    progress: Callable[[str, str, int | None, int | None], Awaitable[None]] | None = None

    async def say(self, line: str, stream: str = "out") -> None:
        """A progress line for a long request (e.g. `embed`); stream "err" keeps it off stdout."""
        if self.progress is not None:
            await self.progress(line, stream, None, None)

    async def count(self, label: str, done: int, total: int) -> None:
        """A counted step of a long request (hippod/calls/progress.py): a bar on a terminal, else nothing."""
        if self.progress is not None:
            await self.progress(label, "err", done, total)

    @property
    def tenant(self) -> str:
        tenant = self.request.tenant or self.request.env.get("HIPPO_TENANT", "")
        return tenant.strip() or "default"

    @property
    def session_key(self) -> str:
        return self.request.session or self.request.env.get("HIPPO_SESSION_ID", "").strip() or "-"

    @property
    def actor(self) -> str:
        return f"cli:{os.getuid()}" if hasattr(os, "getuid") else "cli"

    @property
    def owner(self) -> bool:
        """Whether the user who owns the daemon asks (its socket, the dashboard), who may act on a
        store as a whole; a key holder over HTTP acts within its tenant alone."""
        return True

    @property
    def active_scope(self) -> str | None:
        for name in ("HIPPO_SCOPE", "GSTACK_SKILL", "OPENCLAW_SKILL"):
            value = self.request.env.get(name, "").strip()
            if value:
                return value
        return None

    @property
    def cwd_path_tags(self) -> list[str]:
        return path_tags(self.request.cwd)

    @property
    def verb(self) -> str:
        """The request's verb in words (`decide list`), as errors name it."""
        return verb_words(type(self.request.body).__name__)

    def refuse_off_team(self, refusal: str | None) -> None:
        """On a team server, raise `not_on_team_store` for a request whose body (or MCP tool) says it
        needs a laptop's own store: `refusal` names it (Body.team_refusal), None when served."""
        if refusal is not None and self.state.registry.team is not None:
            raise HippoError(
                NOT_ON_TEAM_STORE,
                f"a team server does not serve {refusal}: it needs a laptop's own store",
            )

    @staticmethod
    async def _ready(store: Store, *, settle: bool = True) -> Store:
        """The store, once its config.json parses (a request on a store whose settings cannot be read
        fails, whether or not it would have read them: HippoError `bad_config`) and, with `settle`,
        the bookkeeping earlier replies left to write is in (a recall's strengthening is seen by the
        next request)."""
        store.config_file.current()
        if settle:
            await store.db.settled()
        return store

    async def global_store(self, *, settle: bool = True) -> Store:
        """The global store; `settle=False` for a caller that only queues a write (`write_soon`), which
        the store's write lock already orders after the bookkeeping before it, so it need not wait."""
        registry = self.state.registry
        return await self._ready(await registry.open(registry.global_root), settle=settle)

    async def project_store(self) -> Store | None:
        root = self.state.registry.project_root_for(self.request.cwd)
        if root is None:
            return None
        return await self._ready(await self.state.registry.open(root))

    async def target_store(self, *, write: bool) -> Store:
        """--global, else the project store above cwd, else the global store (memory-model.md §1.3)."""
        if not self.request.global_store:
            project = await self.project_store()
            if project is not None:
                return project
            if write:
                self.warnings.append(f"(no project store above {self.request.cwd}; using the global store)")
        return await self.global_store()

    async def read_stores(self) -> tuple[Store | None, Store | None]:
        """(project, global) for a merged read; global is None when the project disables merging.

        A corrupt store is left out of the merge with a warning naming it, and the read goes on
        with the other one; when it is the only store the read has, its error is the answer.
        """
        if self.request.global_store:
            return None, await self.global_store()
        try:
            project = await self.project_store()
        except HippoError as exc:
            if exc.code != sqlite_errors.CORRUPT:
                raise
            global_ = await self.global_store()
            self._skipped("project", exc)
            return None, global_
        if project is None:
            return None, await self.global_store()
        if not project.config.get("global", {}).get("enabled", True):
            return project, None
        try:
            return project, await self.global_store()
        except HippoError as exc:
            if exc.code != sqlite_errors.CORRUPT:
                raise
            self._skipped("global", exc)
            return project, None

    def _skipped(self, kind: str, error: HippoError) -> None:
        self.warnings.append(f"(skipped the {kind} store: {error.message}; see: hippoctl doctor)")


# Runs one request through the daemon's handlers: (reply data, text). The process hands it to the
# doors that take requests of their own (the HTTP API, the dashboard, the spool's replay).
Dispatch = Callable[[RequestContext], Awaitable[tuple[Any, str]]]
