"""An import's near-copy candidates from the near-copy index (migration 21): the stored memories that
share a MinHash band key with a chunk (hippod.model.minhash), at a cost per chunk, not per store.

The memories still waiting for their keys (written since the last catch-up, store/sqlite/near_index.py)
are hashed here, in memory, so they are found the same way. Blocking sqlite3 code, on the probe's
own read view (store/sqlite/import_probe.py).
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Sequence

from hippod.model.tokenize import tokenize
from hippod.store.sqlite.imports import LIVE_BY_ROW
from hippod.store.sqlite.near_index import WAITING_HASHED

_PER_STATEMENT = 500


class NearLookup:
    """The index as one import sees it: stored keys, and the waiting memories' keys made here."""

    def __init__(self, conn: sqlite3.Connection, tenant: str) -> None:
        self._conn = conn
        self.tenant = tenant
        self._waiting: dict[int, list[int]] = defaultdict(list)
        # Imported here, not at the top: numpy loads with an import's plan, not with the daemon.
        from hippod.model.minhash import band_keys

        self._band_keys = band_keys
        levels = conn.execute("SELECT level FROM near_levels WHERE keys > 0 ORDER BY level").fetchall()
        self._levels = [int(r[0]) for r in levels]
        # CROSS JOIN keeps the waiting rows outside: the other order reads every memory of the tenant.
        waiting = (
            "SELECT p.row, m.content FROM near_pending p CROSS JOIN memories m ON m.rowid = p.row WHERE "
        )
        rows = conn.execute(waiting + LIVE_BY_ROW, (tenant,)).fetchall()
        sets = [frozenset(tokenize(str(content))) for _, content in rows]
        for (row, _), keys in zip(rows, band_keys(tenant, sets), strict=True):
            for key in keys:
                self._waiting[key].append(int(row))

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
        per_level = "SELECT key, row FROM near_keys WHERE level = ? AND key IN ({marks})"
        for level in self._levels:
            for start in range(0, len(wanted), _PER_STATEMENT):
                part = wanted[start : start + _PER_STATEMENT]
                found = self._conn.execute(per_level.format(marks=", ".join("?" * len(part))), (level, *part))
                for key, row in found:
                    rows_of[int(key)].append(int(row))
        if self._waiting:
            for key, rows in self._waiting.items():
                rows_of[key].extend(rows)
        empty: tuple[int, ...] = ()
        return [set().union(*(rows_of.get(key, empty) for key in row_keys)) for row_keys in keys]
