"""Reading a sleep's snapshot a page at a time, from a worker thread (sleep.md §2).

A sleep plans on one consistent view of its store: a connection of its own, in one read
transaction, so the daemon's reader stays free for recall meanwhile and the view never mixes rows
from before and after another request's commit. Memories come a page at a time and the planner
asks again for the few rows it needs whole, so a large store is never held in memory at once.

Blocking sqlite3 code: open, use and close a SnapshotReader in one worker thread.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence

from hippod.model.memory import COLUMNS, Memory
from hippod.model.sleep_plan import ConflictRow
from hippod.model.sleep_traits import Traits
from hippod.store.memory_codec import row_to_memory
from hippod.store.sleep_rows import PAGE, row_mark
from hippod.store.sqlite import sleep_traits as traits
from hippod.store.sqlite.read_view import ReadView

_SELECT = ", ".join(COLUMNS)
_IDS_PER_QUERY = 500  # below SQLite's bound-parameter limit
_LAST_ROWID = (1 << 63) - 1


class Moved(Exception):
    """A row the plan read went away before the plan asked for it whole: only when the pages were
    read by more than one snapshot (scan_process.py), whose caller then plans again from one."""


class SnapshotReader(ReadView):
    """A read-only view of a store for the length of one sleep's planning.

    While `pages()` runs it notes every memory's `row_mark`, so the handler can tell afterwards
    whether any of them changed or went away before the plan is written.
    """

    def __init__(
        self,
        path: str,
        page: int = PAGE,
        tenant: str | None = None,
        spill: str | None = None,
        rows: tuple[int, int | None] = (0, None),
    ) -> None:
        super().__init__(path)
        self._page = page
        # The rowids `pages()` reads: after the first, up to the second (None: to the end).
        self._after, self._through = rows
        self.marks: array[int] = array("q")
        # Where `keep` writes the traits worked out here (None: nowhere; sleep_traits.py).
        self.spill = traits.Spill(spill)
        self._rows: dict[str, tuple[int, str]] = {}  # id -> (rowid, content) on the last page
        # A sleep of one tenant reads that tenant's rows alone; None reads every tenant's.
        self._only = "" if tenant is None else " AND tenant_id = ?"
        self._tenant: tuple[str, ...] = () if tenant is None else (tenant,)

    def close(self) -> None:
        self.spill.close()
        super().close()

    def _where(self, sql: str) -> str:
        """`sql` (which ends in a WHERE clause) narrowed to the tenant, if the sleep has one."""
        return sql + self._only

    def pages(self) -> Iterator[tuple[list[Memory], list[Traits | None]]]:
        """Every memory (of the tenant), a page (PAGE unless told) at a time, by rowid, with the
        traits kept for each one's text (None where none are kept for it)."""
        last = self._after
        width = len(COLUMNS)
        select = self._where(
            f"SELECT {_SELECT}, memories.rowid, {traits.COLUMNS} FROM memories {traits.JOIN} "
            "WHERE memories.rowid > ? AND memories.rowid <= ?"
        )
        through = _LAST_ROWID if self._through is None else self._through
        while True:
            rows = self._conn.execute(
                f"{select} ORDER BY memories.rowid LIMIT ?", (last, through, *self._tenant, self._page)
            ).fetchall()
            if not rows:
                return
            last = int(rows[-1][width])
            page = [row_to_memory(row[:width]) for row in rows]
            self.marks.extend(row_mark(m.id, m.updated_at) for m in page)
            both = list(zip(page, rows, strict=True))
            self._rows = {m.id: (int(row[width]), m.content) for m, row in both}
            yield page, [traits.decode(m.content, row[width + 1 :]) for m, row in both]

    def keep(self, learned: Sequence[tuple[str, Traits]]) -> None:
        """Write the traits worked out for memories of the last page to the spill file
        (store/sqlite/sleep_traits.py), which the daemon copies into the store after the sleep."""
        found = self._rows
        self.spill.write([traits.encode(*found[i], t) for i, t in learned])

    def fetch(self, ids: Sequence[str]) -> dict[str, Memory]:
        """The memories with these ids, as they are in the snapshot; Moved if one is not there (its
        page was read by another process's snapshot, and it went away in between)."""
        found: dict[str, Memory] = {}
        for start in range(0, len(ids), _IDS_PER_QUERY):
            chunk = list(ids[start : start + _IDS_PER_QUERY])
            marks = ", ".join("?" * len(chunk))
            for row in self._conn.execute(f"SELECT {_SELECT} FROM memories WHERE id IN ({marks})", chunk):
                memory = row_to_memory(row)
                found[memory.id] = memory
        if len(found) < len(set(ids)):
            raise Moved(f"{len(set(ids)) - len(found)} memories of the plan went away")
        return found

    def halfway(self, least: int) -> int | None:
        """The rowid that splits the memories (of the tenant) in two halves, the first holding it
        and those before it; None when there are fewer than `least`."""
        count = self._conn.execute(self._where("SELECT count(*) FROM memories WHERE 1"), self._tenant)
        total = int(count.fetchone()[0])
        if total < max(least, 2):
            return None
        row = self._conn.execute(
            self._where("SELECT rowid FROM memories WHERE 1") + " ORDER BY rowid LIMIT 1 OFFSET ?",
            (*self._tenant, total // 2 - 1),
        ).fetchone()
        return None if row is None else int(row[0])

    def dormant(self) -> Iterator[tuple[str, str, str]]:
        """(id, tenant, dormant_at) of every dormant memory."""
        for memory_id, tenant, at in self._conn.execute(
            self._where("SELECT id, tenant_id, dormant_at FROM dormant_memories WHERE 1"), self._tenant
        ):
            yield str(memory_id), str(tenant), str(at)

    def run_times(self) -> list[str]:
        """When the newest 20 sleeps of the whole store ran (they set the pace of adaptive decay)."""
        rows = self._conn.execute(
            "SELECT ts FROM consolidation_runs WHERE tenant_id IS NULL ORDER BY id DESC LIMIT 20"
        )
        return [str(r[0]) for r in rows]

    def rejected(self) -> set[tuple[str, str]]:
        """(tenant, digest) of every tombstone (of the tenant)."""
        sql = self._where("SELECT tenant_id, digest FROM rejected_values WHERE 1")
        return {(str(t), str(d)) for t, d in self._conn.execute(sql, self._tenant)}

    def conflicts(self) -> list[ConflictRow]:
        """Every stored conflict (of the tenant)."""
        rows = self._conn.execute(
            self._where(
                "SELECT id, memory_a_id, memory_b_id, tenant_id, status, resolved_by "
                "FROM memory_conflicts WHERE 1"
            ),
            self._tenant,
        )
        return [ConflictRow(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in rows]

    def compared(self) -> set[str]:
        """The ids of the rows the last sleep wrote after comparing them, untouched since (migration 25)."""
        return {str(r[0]) for r in self._conn.execute("SELECT id FROM sleep_compared")}

    def last_sleep(self) -> str | None:
        """When the previous written sleep of the whole store ran: every memory unchanged since was
        compared with the others then (a tenant's own sleeps do not move it)."""
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'last_sleep'").fetchone()
        return None if row is None else str(row[0])
