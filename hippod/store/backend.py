"""The store interface with two implementations: a store's database, its memory rows and its keys.

`Database` (store/sqlite/db.py, SQLite) and `TeamDatabase` (store/postgres/pg.py, PostgreSQL) are both a
`StoreDatabase`; the modules `hippod.store.sqlite.memories` and `hippod.store.postgres.memories` are both
`MemoryRows`, and so on for each pair of same-named modules: `KeyRows` (api_keys),
`RejectionRows` (rejections), `AuditRows` (auditlog), `ConflictRows` (conflicts), `DormantRows`
(dormant), `SleepRows` (sleep), `ReportRows` (reports) and `NoteLinkRows` (agent_links). A `Backend`
bundles one backend's modules (store.SQLITE, postgres/store.TEAM), and a Store holds them as `rows`,
`keys`, `rejections`, `audit_log`, `conflicts`, `dormant`, `sleeps`, `reports` and `note_links`. A
handler reaches rows as `store.rows.get(store.db.reader, ...)` or, inside `store.db.transaction()`,
with the connection it yields, and so runs unchanged on either backend.
A connection is typed Any here: each backend's rows take its own kind.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from hippod.base.errors import HippoError
from hippod.model.memory import Memory
from hippod.model.sleep_plan import Plan, Settings
from hippod.store.records import ApiKey, Candidate, ConflictRecord, DormantMemory, Entry, Rejection, TermStats
from hippod.store.sleep_rows import Planned

# What a backend-neutral caller sees of a connection: only the rows' functions of its store's own
# backend (which take Any) accept it, so mypy refuses it to a SQLite row module (a SqliteStore's is typed).
Write = Callable[[object], Awaitable[None]]


class StoreDatabase(Protocol):
    """A store's database as handlers use it."""

    @property
    def path(self) -> str:
        """Where the store's data lives, for messages and logs."""
        ...

    @property
    def reader(self) -> object:
        """What the rows' read functions take to read committed rows."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[object]:
        """One write transaction: its connection, committed when the block ends."""
        ...

    def long_transaction(self) -> AbstractAsyncContextManager[object]:
        """transaction() for a write that holds the store for seconds."""
        ...

    async def write_bookkeeping(
        self, write: Write, after: Callable[[], None] | None = None, *, after_reply: bool = False
    ) -> HippoError | None:
        """A read's bookkeeping write; its error, when the disk is full, instead of raising it."""
        ...

    def write_soon(self, write: Write, after: Callable[[], None] | None = None) -> asyncio.Task[None]:
        """Run `write` in its own transaction in the background, then `after`."""
        ...

    async def settled(self) -> None:
        """Wait for the bookkeeping earlier replies left to write."""
        ...

    def checkpoint_soon(self) -> None:
        """Drop what a removal left behind in the database's files, in the background."""
        ...

    async def close(self) -> None: ...


class MemoryRows(Protocol):
    """The memory rows' functions the shared handlers call (hippod.store.sqlite.memories has them all)."""

    async def insert(self, conn: Any, memory: Memory, /) -> bool: ...
    async def update(self, conn: Any, memory: Memory, /) -> None: ...
    async def mark_superseded(self, conn: Any, old_id: str, new_id: str, now: str, /) -> bool: ...
    async def get(self, conn: Any, tenant: str, memory_id: str, /) -> Memory | None: ...
    async def get_many(self, conn: Any, ids: Sequence[str], /) -> list[Memory]: ...
    async def with_digest(self, conn: Any, tenant: str, digest: str, /) -> list[Memory]: ...
    async def live(self, conn: Any, tenant: str, /) -> list[Memory]: ...
    async def term_statistics(self, conn: Any, terms: Sequence[str], /) -> TermStats: ...
    async def candidates_fts(
        self,
        conn: Any,
        tenant: str,
        terms: Sequence[str],
        /,
        *,
        include_superseded: bool,
        scope: str | None,
        limit: int = ...,
    ) -> list[Candidate]: ...
    async def candidates_ids(
        self, conn: Any, tenant: str, ids: Sequence[str], /, *, include_superseded: bool, scope: str | None
    ) -> list[Candidate]: ...
    async def candidates_oldest(
        self, conn: Any, tenant: str, /, *, include_superseded: bool, scope: str | None, limit: int = ...
    ) -> list[Candidate]: ...
    async def admitted(self, conn: Any, tenant: str, /, *, scope: str | None) -> list[Memory]: ...
    async def strengthen(self, conn: Any, ids: Sequence[str], now: str, bonus_days: float, /) -> None: ...
    async def update_outcome(self, conn: Any, changed: Sequence[Memory], /) -> None: ...
    async def delete(self, conn: Any, tenant: str, memory_id: str, /) -> bool: ...
    async def delete_facts_of(self, conn: Any, tenant: str, sources: Sequence[str], /) -> list[str]: ...
    async def archive_raw(self, conn: Any, memory: Memory, reason: str, now: str, /) -> None: ...
    async def superseded_by_chain(self, conn: Any, memory_id: str, /) -> list[str]: ...
    async def audit(
        self,
        conn: Any,
        /,
        *,
        ts: str,
        tenant: str,
        actor: str,
        op: str,
        target: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None: ...
    async def audit_many(
        self,
        conn: Any,
        /,
        *,
        ts: str,
        tenant: str,
        actor: str,
        op: str,
        targets: Sequence[str | None],
        metadata: dict[str, Any] | None = None,
    ) -> None: ...
    async def audit_rows(
        self,
        conn: Any,
        rows: Sequence[tuple[str, str, str, str, str | None]],
        metadata: dict[str, Any] | None = None,
        /,
    ) -> None: ...
    async def get_meta(self, conn: Any, key: str, /) -> str | None: ...
    async def set_meta(self, conn: Any, key: str, value: str, /) -> None: ...


class KeyRows(Protocol):
    """The HTTP API's keys (hippod.store.sqlite.api_keys has them all)."""

    async def insert(
        self, conn: Any, key_id: str, key_hash: str, tenant: str, label: str | None, role: str, now: str, /
    ) -> ApiKey: ...
    async def by_key_id(self, conn: Any, key_id: str, /) -> ApiKey | None: ...
    async def listed(
        self, conn: Any, tenant: str, /, *, active_only: bool, limit: int | None, before: int | None
    ) -> list[ApiKey]: ...
    async def revoke(self, conn: Any, key_id: str, now: str, /) -> None: ...


class RejectionRows(Protocol):
    """Tombstoned values (hippod.store.sqlite.rejections has them all)."""

    async def all_digests(self, conn: Any, tenant: str, /) -> set[str]: ...
    async def all_of(self, conn: Any, tenant: str, /) -> list[Rejection]: ...
    async def matching(self, conn: Any, tenant: str, prefix: str, /) -> list[str]: ...
    async def remove(self, conn: Any, tenant: str, digest: str, /) -> bool: ...
    async def reject_copies(
        self, conn: Any, tenant: str, tombstone: Rejection, value: str, /
    ) -> tuple[list[str], list[str], list[str]]: ...


class ConflictRows(Protocol):
    """Conflicts between memories (hippod.store.sqlite.conflicts has them all)."""

    async def listing(self, conn: Any, tenant: str | None, status: str, /) -> list[ConflictRecord]: ...
    async def get(self, conn: Any, tenant: str, number: int, /) -> ConflictRecord | None: ...
    async def mark_user_resolved(self, conn: Any, number: int, now: str, /) -> None: ...
    async def set_conflicts_with(self, conn: Any, memory: Memory, now: str, /) -> None: ...
    async def halve_half_life(self, conn: Any, memory: Memory, now: str, /) -> None: ...
    async def contents(self, conn: Any, ids: list[str], /) -> dict[str, str]: ...


class DormantRows(Protocol):
    """The dormant store (hippod.store.sqlite.dormant has them all)."""

    async def move_out(self, conn: Any, memory_id: str, /) -> bool: ...
    async def get(self, conn: Any, tenant: str, memory_id: str, /) -> DormantMemory | None: ...
    async def newest(self, conn: Any, tenant: str, /) -> list[DormantMemory]: ...
    async def delete(self, conn: Any, tenant: str, memory_id: str, /) -> bool: ...
    async def count(self, conn: Any, tenant: str, /) -> int: ...


class SleepRows(Protocol):
    """A sleep's plan and its writes (hippod.store.sqlite.sleep has them all)."""

    async def planned(
        self, db: Any, settings: Settings, new_id: Callable[[], str], conn: Any = ..., /
    ) -> Planned: ...
    async def changed_since(
        self, conn: Any, marks: Sequence[int], statuses: Mapping[int, str], /
    ) -> bool: ...
    async def apply(
        self, conn: Any, plan: Plan, /, *, dormant_at: str, step: Callable[[str], Awaitable[None]]
    ) -> None: ...
    async def record(
        self,
        conn: Any,
        /,
        *,
        now: str,
        results: dict[str, Any],
        tenants: Sequence[str],
        only_tenant: str | None = ...,
    ) -> None: ...
    async def set_shared(self, conn: Any, shared: int, /) -> None: ...


class ReportRows(Protocol):
    """The reads of `status` and `export` (hippod.store.sqlite.reports has them all)."""

    async def all_meta(self, conn: Any, /) -> dict[str, str]: ...
    async def status_rows(self, conn: Any, tenant: str, /) -> list[tuple[Any, ...]]: ...
    async def count_open(self, conn: Any, tenant: str, /) -> int: ...
    async def exported(self, conn: Any, tenant: str, /) -> list[Memory]: ...


class AuditRows(Protocol):
    """Reading and trimming the audit log (hippod.store.sqlite.auditlog has them all)."""

    async def newest(
        self, conn: Any, tenant: str, /, *, op: str | None, since: str | None, limit: int
    ) -> list[Entry]: ...
    async def prune(self, conn: Any, before: str, /) -> int: ...


class NoteLinkRows(Protocol):
    """What `forget` and `dormant restore` do to the links from agents' notes to a memory
    (hippod.store.sqlite.agent_links has them all; the team store has no links)."""

    async def suppress(self, conn: Any, memory_id: str, /) -> int: ...
    async def detach(self, conn: Any, memory_id: str, /) -> int: ...


@dataclass(frozen=True, slots=True)
class Backend:
    """One backend's row modules, each checked against its interface where the bundle is made."""

    rows: MemoryRows
    keys: KeyRows
    rejections: RejectionRows
    conflicts: ConflictRows
    dormant: DormantRows
    sleeps: SleepRows
    audit_log: AuditRows
    reports: ReportRows
    note_links: NoteLinkRows
