"""A store's vectors held in memory, to find the memories nearest a query by meaning.

Recall's term candidates (recall.md §2) only reach memories that share a word with the query. With
embeddings on, the memories whose vectors are nearest the query's join them, so a memory written
in other words ("camera flash" for "photography accessories") can still come back. The search is
a brute-force product over every vector, which is exact and costs about 2 ms per 20,000 vectors;
past SCAN_MAX vectors a store keeps its term candidates alone, as the matrix would outgrow the
daemon's memory budget and the product its recall time.

The matrix is read from the embeddings table once, at the first recall that needs it; after that
every vector the daemon writes is put in by the transaction that stores it (embed/queue.py). All of
it runs on the event loop, so a search never sees a matrix half-changed. Vectors of memories deleted
since stay in the matrix; recall's admission filter leaves them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

import aiosqlite
import numpy as np
import numpy.typing as npt

from hippod.store import embeddings

# Memories taken by meaning on top of the term candidates, at most.
NEAREST = 50
# The most vectors a store's index holds; a store with more keeps its term candidates alone.
SCAN_MAX = 20_000


class NearestIndex:
    """One store's vectors of one model: loaded once, then kept current by `put`."""

    def __init__(self, model: str, dim: int) -> None:
        self.model = model
        self.dim = dim
        self.loaded = False
        self.too_large = False
        self._ids: list[str] = []
        self._row_of: dict[str, int] = {}
        self._matrix: npt.NDArray[np.float32] = np.zeros((0, dim), dtype=np.float32)

    def __len__(self) -> int:
        return len(self._ids)

    async def load(self, conn: aiosqlite.Connection) -> None:
        """Read the store's vectors of this model, unless there are more than SCAN_MAX."""
        if await embeddings.total(conn) > SCAN_MAX:
            self._give_up()
        else:
            rows = await embeddings.all_vectors(conn, self.model)
            # A vector put while the table was being read is newer than the one read for it.
            self._add([(memory_id, blob) for memory_id, blob in rows if memory_id not in self._row_of])
        self.loaded = True

    def put(self, rows: Sequence[tuple[str, bytes]]) -> None:
        """(memory id, vector) pairs being stored: new memories, or new text for known ones."""
        if not self.too_large:
            self._add(rows)

    def _add(self, rows: Sequence[tuple[str, bytes]]) -> None:
        fresh = {memory_id: blob for memory_id, blob in rows if len(blob) == 4 * self.dim}
        new = [memory_id for memory_id in fresh if memory_id not in self._row_of]
        if len(self._ids) + len(new) > SCAN_MAX:
            self._give_up()
            return
        if new:
            grown = np.empty((len(self._ids) + len(new), self.dim), dtype=np.float32)
            grown[: len(self._ids)] = self._matrix
            self._matrix = grown
            for memory_id in new:
                self._row_of[memory_id] = len(self._ids)
                self._ids.append(memory_id)
        for memory_id, blob in fresh.items():
            self._matrix[self._row_of[memory_id]] = np.frombuffer(blob, dtype="<f4")

    def _give_up(self) -> None:
        self.too_large = True
        self._ids, self._row_of = [], {}
        self._matrix = np.zeros((0, self.dim), dtype=np.float32)

    def nearest(self, query: bytes, floor: float, skip: AbstractSet[str], limit: int = NEAREST) -> list[str]:
        """Up to `limit` memory ids, nearest first, whose cosine with `query` reaches `floor`, less `skip`.

        Ties go to the memory stored first, so the same query on the same store gives the same ids.
        """
        if not self._ids or len(query) != 4 * self.dim:
            return []
        cosines = self._matrix @ np.frombuffer(query, dtype="<f4")
        wanted = min(len(cosines), limit + len(skip))
        # The best `wanted` by cosine in no order (a partial sort of the whole), then ordered.
        top = np.argpartition(-cosines, wanted - 1)[:wanted]
        ranked = sorted(top.tolist(), key=lambda row: (-float(cosines[row]), row))
        found: list[str] = []
        for row in ranked:
            if float(cosines[row]) < floor or len(found) == limit:
                break
            if self._ids[row] not in skip:
                found.append(self._ids[row])
        return found
