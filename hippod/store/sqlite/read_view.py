"""A read-only view of a store for one long job in a worker thread (a sleep's plan, an import's
duplicate check): a connection of its own in one read transaction, so the daemon's reader stays
free for recall and the job sees one moment of the store throughout.

Blocking sqlite3 code: open, use and close a view in one worker thread.
"""

from __future__ import annotations

import sqlite3
from types import TracebackType
from typing import Self


class ReadView:
    """A connection to the store at `path`, read-only, inside one transaction until `close()`."""

    def __init__(self, path: str) -> None:
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=True)
        self._conn.execute("PRAGMA busy_timeout=5000")
        self._conn.execute("PRAGMA query_only=ON")
        self._conn.execute("BEGIN")

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        try:
            self._conn.execute("COMMIT")
        finally:
            self._conn.close()
