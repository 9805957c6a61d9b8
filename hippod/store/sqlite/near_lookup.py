"""An import's near-copy candidates from the near-copy index (migration 21): the stored memories that
share a MinHash band key with a chunk (hippod.model.minhash), at a cost per chunk, not per store.

The memories still waiting for their keys (written since the last catch-up, store/sqlite/near_index.py)
are hashed here, in memory, so they are found the same way. Blocking sqlite3 code, on the probe's
own read view (store/sqlite/import_probe.py), or, for a planning process, on a snapshot of its own
in a thread that searches ahead of the probe (Ahead).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import defaultdict
from collections.abc import Sequence

from hippod.model.tokenize import tokenize
from hippod.store.sqlite.imports import LIVE_BY_ROW
from hippod.store.sqlite.near_index import WAITING_HASHED

_PER_STATEMENT = 500
# Batches of chunks that Ahead looks up before the judge asks for them.
AHEAD = 4


class NearLookup:
    """The index as one import sees it: stored keys, and the waiting memories' keys made here."""

    def __init__(
        self, conn: sqlite3.Connection, tenant: str, waiting: dict[int, list[int]] | None = None
    ) -> None:
        self._conn = conn
        self.tenant = tenant
        # Imported here, not at the top: numpy loads with an import's plan, not with the daemon.
        from hippod.model.minhash import band_keys

        self._band_keys = band_keys
        levels = conn.execute("SELECT level FROM near_levels WHERE keys > 0 ORDER BY level").fetchall()
        self._levels = [int(r[0]) for r in levels]
        if waiting is not None:  # hashed already, by the lookup this one helps (Ahead)
            self._waiting = waiting
            return
        self._waiting = defaultdict(list)
        # CROSS JOIN keeps the waiting rows outside: the other order reads every memory of the tenant.
        query = "SELECT p.row, m.content FROM near_pending p CROSS JOIN memories m ON m.rowid = p.row WHERE "
        rows = conn.execute(query + LIVE_BY_ROW, (tenant,)).fetchall()
        sets = [frozenset(tokenize(str(content))) for _, content in rows]
        for (row, _), keys in zip(rows, band_keys(tenant, sets), strict=True):
            for key in keys:
                self._waiting[key].append(int(row))

    @property
    def waiting(self) -> dict[int, list[int]]:
        """The band keys of the memories still waiting for theirs in the store, made here."""
        return self._waiting

    @staticmethod
    def usable(conn: sqlite3.Connection) -> bool:
        """Whether the index covers the store well enough to be asked (few memories waiting)."""
        (count,) = conn.execute("SELECT count(*) FROM near_pending").fetchone()
        return int(count) <= WAITING_HASHED

    def candidates(self, sets: Sequence[frozenset[str]]) -> list[set[int]]:
        """For each set, the row numbers sharing a band key with it (none for an empty set)."""
        keys = self._band_keys(self.tenant, sets)
        wanted = sorted({key for row in keys for key in row})
        rows_of: dict[int, list[int]] = defaultdict(list)
        # Each level is searched by the primary key (level, key): a few seeks per key, not a scan.
        # One row a statement, the pairs joined in it: each row fetched takes the interpreter's lock
        # back, and a planning process's lookups run in a thread beside its judge (Ahead).
        per_level = (
            "SELECT group_concat(key || ' ' || row, ' ') FROM near_keys WHERE level = ? AND key IN ({marks})"
        )
        for level in self._levels:
            for start in range(0, len(wanted), _PER_STATEMENT):
                part = wanted[start : start + _PER_STATEMENT]
                marks = ", ".join("?" * len(part))
                (joined,) = self._conn.execute(per_level.format(marks=marks), (level, *part)).fetchone()
                if joined:
                    numbers = joined.split()
                    for key, row in zip(numbers[::2], numbers[1::2], strict=True):
                        rows_of[int(key)].append(int(row))
        if self._waiting:
            for key, rows in self._waiting.items():
                rows_of[key].extend(rows)
        empty: tuple[int, ...] = ()
        return [set().union(*(rows_of.get(key, empty) for key in row_keys)) for row_keys in keys]


class Ahead:
    """The candidates of an import's chunks, looked up in order ahead of the judge that asks for them,
    in a thread of their own with a read-only connection of their own: the index's searches (SQLite,
    which lets go of the interpreter while it works) overlap the judge's Python. For a planning
    process, which has a core to itself.

    The judge asks for every chunk once, in order, a batch at a time (a chunk import's does): what
    is looked up waits for it, and the thread stays AHEAD batches past what it asked for.

    Its connection reads one moment of the store (`snapshot`), which may be later than the judge's:
    a memory stored since is then a candidate that the judge, reading its own moment, does not find,
    and skips; a merge of the index's levels committed since moves keys, never drops them.
    """

    def __init__(self, path: str, lookup: NearLookup, sets: Sequence[frozenset[str]], batch: int) -> None:
        self.sets = sets
        self._path, self._tenant, self._waiting = path, lookup.tenant, lookup.waiting
        self._batch = batch
        self._found: dict[int, set[int]] = {}
        self._ready = 0  # the chunks before this one are looked up
        self._wanted = 0  # and those before this one asked for
        self._error: BaseException | None = None
        self._stop = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="near-copy lookups", daemon=True)
        self._thread.start()

    def candidates(self, positions: Sequence[int]) -> list[set[int]]:
        """NearLookup.candidates of these chunks (by position in `sets`), once looked up."""
        if not positions:
            return []
        last = max(positions)
        with self._changed:
            self._wanted = max(self._wanted, last + 1)
            self._changed.notify_all()
            while self._ready <= last and self._error is None:
                self._changed.wait()
            if self._error is not None:
                raise self._error
            return [self._found.pop(i) for i in positions]

    def close(self) -> None:
        """Stop looking up (at the end of the batch under way) and wait for the thread."""
        with self._changed:
            self._stop = True
            self._changed.notify_all()
        self._thread.join()

    def _run(self) -> None:
        try:
            conn = snapshot(self._path)
            try:
                lookup = NearLookup(conn, self._tenant, self._waiting)
                for start in range(0, len(self.sets), self._batch):
                    with self._changed:
                        # No further ahead than AHEAD batches past what the judge asked for: the
                        # candidates wait in memory until it does.
                        while not self._stop and start >= self._wanted + AHEAD * self._batch:
                            self._changed.wait()
                        if self._stop:
                            return
                    found = lookup.candidates(self.sets[start : start + self._batch])
                    with self._changed:
                        self._found.update(enumerate(found, start))
                        self._ready = start + len(found)
                        self._changed.notify_all()
            finally:
                conn.close()
        except BaseException as exc:  # handed to the judge, which raises it
            with self._changed:
                self._error = exc
                self._changed.notify_all()


def snapshot(path: str) -> sqlite3.Connection:
    """A read-only connection to the store at `path` inside one read transaction: its levels and
    their keys are of one moment, whatever merges the daemon commits meanwhile."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA query_only=ON")
    conn.execute("BEGIN")
    return conn
