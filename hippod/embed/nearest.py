"""A store's vectors held in memory, to find the memories nearest a query by meaning.

Recall's term candidates (recall.md §2) only reach memories that share a word with the query. With
embeddings on, the memories whose vectors are nearest the query's join them, so a memory written
in other words ("camera flash" for "photography accessories") can still come back. The search is
a brute-force product over every vector, which is exact up to the int8 rounding below.

Each vector is held as int8, scaled so its largest component is ±127 (its scale kept beside it):
384 bytes a vector, a quarter of the float32 the table stores, for cosines off by less than 0.01
(the same top 10 as the float32 product in bench/vector_search.py). The product runs over blocks
of rows turned back to float32, so it never holds more than one block's copy. The bench measures
48 MB and 15 to 45 ms a search at 100,000 vectors on two busy cores, about ten times both at
1,000,000. Past SCAN_MAX vectors a store keeps its term candidates alone, as the matrix would outgrow the
daemon's memory budget.

The matrix is read from the embeddings table once, page by page, at the first recall that needs it;
after that every vector the daemon writes is put in by the transaction that stores it
(embed/queue.py). All of it runs on the event loop, so a search never sees a matrix half-changed.
Vectors of memories deleted since stay in the matrix; recall's admission filter leaves them out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

import aiosqlite
import numpy as np
import numpy.typing as npt

from hippod.store.sqlite import embeddings

# Memories taken by meaning on top of the term candidates, at most.
NEAREST = 50
# The most vectors a store's index holds (about 400 MB); a store with more keeps its term candidates alone.
SCAN_MAX = 1_000_000
# Rows turned back to float32 at a time by a search (1.5 MB at 384 dimensions), and vectors read
# from the table at a time by a load.
BLOCK = 1024
PAGE = 4096
# The smallest room a growing matrix takes, in rows; it doubles when full.
FIRST_ROOM = 1024


def quantise(rows: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """(int8 codes, scale per row) with codes x scale close to rows; a zero row has scale 0."""
    peak = np.abs(rows).max(axis=1) if len(rows) else np.zeros(0, dtype=np.float32)
    scales = (peak / 127.0).astype(np.float32)
    safe = np.where(scales > 0, scales, 1.0).astype(np.float32)
    codes = np.rint(rows / safe[:, None]).clip(-127, 127).astype(np.int8)
    return codes, scales


class NearestIndex:
    """One store's vectors of one model: loaded once, then kept current by `put`."""

    def __init__(self, model: str, dim: int) -> None:
        self.model = model
        self.dim = dim
        self.loaded = False
        self.too_large = False
        self._ids: list[str] = []
        self._row_of: dict[str, int] = {}
        self._codes: npt.NDArray[np.int8] = np.zeros((0, dim), dtype=np.int8)
        self._scales: npt.NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        # Memories put before the load has read them: what the table holds for them is older.
        self._put_early: set[str] = set()
        # Recalls that arrive while the vectors are being read wait for that one read.
        self._loading = asyncio.Lock()

    def __len__(self) -> int:
        return len(self._ids)

    def nbytes(self) -> int:
        """Bytes of the matrix and its scales, room to grow included (not the ids)."""
        return int(self._codes.nbytes + self._scales.nbytes)

    async def ensure_loaded(self, conn: aiosqlite.Connection) -> None:
        """Load the store's vectors unless they are: once, however many recalls ask at the same time."""
        async with self._loading:
            if not self.loaded:
                await self.load(conn)

    async def load(self, conn: aiosqlite.Connection) -> None:
        """Read the store's vectors of this model, a page at a time, unless there are more than SCAN_MAX."""
        if await embeddings.total(conn) > SCAN_MAX:
            self._give_up()
            self.loaded = True
            return
        after = 0
        while not self.too_large:
            page = await embeddings.vectors_page(conn, self.model, after, PAGE)
            if not page:
                break
            after = page[-1][0]
            # A vector put while the table was being read is newer than the one read for it.
            self._add([(memory_id, blob) for _, memory_id, blob in page if memory_id not in self._put_early])
        self.loaded = True
        self._put_early = set()

    def put(self, rows: Sequence[tuple[str, bytes]]) -> None:
        """(memory id, vector) pairs being stored: new memories, or new text for known ones."""
        if not self.too_large:
            if not self.loaded:
                self._put_early.update(memory_id for memory_id, _ in rows)
            self._add(rows)

    def _add(self, rows: Sequence[tuple[str, bytes]]) -> None:
        fresh = {memory_id: blob for memory_id, blob in rows if len(blob) == 4 * self.dim}
        if not fresh:
            return
        new = [memory_id for memory_id in fresh if memory_id not in self._row_of]
        if len(self._ids) + len(new) > SCAN_MAX:
            self._give_up()
            return
        self._make_room(len(self._ids) + len(new))
        for memory_id in new:
            self._row_of[memory_id] = len(self._ids)
            self._ids.append(memory_id)
        where = np.fromiter((self._row_of[i] for i in fresh), dtype=np.int64, count=len(fresh))
        matrix = np.frombuffer(b"".join(fresh.values()), dtype="<f4").reshape(len(fresh), self.dim)
        self._codes[where], self._scales[where] = quantise(matrix.astype(np.float32))

    def _make_room(self, rows: int) -> None:
        """Grow the matrix to hold `rows`, doubling, so a put of a few vectors copies nothing."""
        if rows <= len(self._codes):
            return
        room = max(FIRST_ROOM, len(self._codes))
        while room < rows:
            room *= 2
        room = min(room, max(rows, SCAN_MAX))
        codes = np.zeros((room, self.dim), dtype=np.int8)
        codes[: len(self._ids)] = self._codes[: len(self._ids)]
        scales = np.zeros(room, dtype=np.float32)
        scales[: len(self._ids)] = self._scales[: len(self._ids)]
        self._codes, self._scales = codes, scales

    def _give_up(self) -> None:
        self.too_large = True
        self._ids, self._row_of = [], {}
        self._codes = np.zeros((0, self.dim), dtype=np.int8)
        self._scales = np.zeros(0, dtype=np.float32)

    def cosines(self, query: bytes) -> npt.NDArray[np.float32]:
        """The cosine of `query` with every vector held, in row order."""
        vector = np.frombuffer(query, dtype="<f4").astype(np.float32)
        count = len(self._ids)
        out = np.empty(count, dtype=np.float32)
        for start in range(0, count, BLOCK):
            end = min(start + BLOCK, count)
            np.matmul(self._codes[start:end].astype(np.float32), vector, out=out[start:end])
        out *= self._scales[:count]
        return out

    def nearest(self, query: bytes, floor: float, skip: AbstractSet[str], limit: int = NEAREST) -> list[str]:
        """Up to `limit` memory ids, nearest first, whose cosine with `query` reaches `floor`, less `skip`.

        Ties go to the memory stored first, so the same query on the same store gives the same ids.
        """
        if not self._ids or len(query) != 4 * self.dim:
            return []
        cosines = self.cosines(query)
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
