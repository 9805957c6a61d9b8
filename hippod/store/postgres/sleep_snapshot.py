"""Reading a team sleep's snapshot from a worker thread: `hippod.store.sqlite.sleep_snapshot` on PostgreSQL.

The plan reads one tenant through a connection of its own, in one REPEATABLE READ transaction (one
moment of the database throughout), as the application role under row-level security. (One more
connection than the pool's while a sleep plans.) Given the
name of a snapshot that the sleep's write transaction exported, it reads exactly what that
transaction sees.

Blocking psycopg code: open, use and close a TeamSnapshot in one worker thread.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any, Self

import psycopg
from psycopg import IsolationLevel, sql

from hippod.base.errors import HippoError
from hippod.model.memory import COLUMNS, Memory
from hippod.model.sleep_plan import ConflictRow
from hippod.model.sleep_traits import Traits
from hippod.store.memory_codec import row_to_memory
from hippod.store.postgres.pg import CONNECT_TIMEOUT
from hippod.store.sleep_rows import PAGE, row_mark

_SELECT = ", ".join(COLUMNS)


class TeamSnapshot:
    """A read-only view of one tenant of the team store for the length of one sleep's planning;
    notes every memory's `row_mark` as `pages()` runs, as the SQLite one does."""

    def __init__(self, conninfo: str, role: str, tenant: str, snapshot: str | None = None) -> None:
        try:
            self._conn = psycopg.connect(conninfo, connect_timeout=CONNECT_TIMEOUT)
        except psycopg.OperationalError as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise HippoError(
                "team_unreachable", f"the team database cannot be read for a sleep: {reason}"
            ) from None
        try:
            self._conn.isolation_level = IsolationLevel.REPEATABLE_READ
            self._conn.read_only = True
            if snapshot is not None:
                # Before any query of the transaction; a utility statement takes no parameters.
                self._conn.execute(sql.SQL("SET TRANSACTION SNAPSHOT {}").format(sql.Literal(snapshot)))
            self._conn.execute(
                "SELECT set_config('role', %s, true), set_config('hippo.tenant', %s, true)", (role, tenant)
            )
        except BaseException:
            self._conn.close()
            raise
        self.marks: array[int] = array("q")

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._conn.close()  # rolls back: the transaction only read

    def _rows(self, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._conn.execute(query, params).fetchall()

    def pages(self) -> Iterator[tuple[list[Memory], Sequence[Traits | None]]]:
        """Every memory of the tenant, PAGE at a time, in the order they were stored; the team store
        keeps no traits (model/sleep_traits.py): each of its sleeps works them out afresh."""
        last = 0
        while True:
            rows = self._rows(
                f"SELECT {_SELECT}, seq FROM memories WHERE seq > %s ORDER BY seq LIMIT %s", (last, PAGE)
            )
            if not rows:
                return
            last = int(rows[-1][-1])
            page = [row_to_memory(row) for row in rows]
            self.marks.extend(row_mark(m.id, m.updated_at) for m in page)
            yield page, [None] * len(page)

    def keep(self, learned: Sequence[tuple[str, Traits]]) -> None:
        """Nothing: the team store keeps no traits."""

    def fetch(self, ids: Sequence[str]) -> dict[str, Memory]:
        """The memories with these ids, as they are in the snapshot."""
        rows = self._rows(f"SELECT {_SELECT} FROM memories WHERE id = ANY(%s)", (list(ids),))
        return {m.id: m for m in map(row_to_memory, rows)}

    def dormant(self) -> Iterator[tuple[str, str, str]]:
        """(id, tenant, dormant_at) of every dormant memory."""
        for memory_id, tenant, at in self._rows("SELECT id, tenant_id, dormant_at FROM dormant_memories"):
            yield str(memory_id), str(tenant), str(at)

    def run_times(self) -> list[str]:
        """When the tenant's newest 20 sleeps ran."""
        return [str(r[0]) for r in self._rows("SELECT ts FROM consolidation_runs ORDER BY id DESC LIMIT 20")]

    def rejected(self) -> set[tuple[str, str]]:
        """(tenant, digest) of every tombstone."""
        return {(str(t), str(d)) for t, d in self._rows("SELECT tenant_id, digest FROM rejected_values")}

    def conflicts(self) -> list[ConflictRow]:
        """Every stored conflict."""
        rows = self._rows(
            "SELECT id, memory_a_id, memory_b_id, tenant_id, status, resolved_by FROM memory_conflicts"
        )
        return [ConflictRow(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in rows]

    def compared(self) -> set[str]:
        """None: the team store does not name the rows a sleep wrote, so the next one compares them again."""
        return set()

    def last_sleep(self) -> str | None:
        """When the tenant's previous written sleep ran."""
        rows = self._rows("SELECT value FROM meta WHERE key = 'last_sleep'")
        return str(rows[0][0]) if rows else None
