"""The traits a sleep keeps of each memory's text (hippod.model.sleep_traits), in `sleep_traits`.

A sleep's planner reads them with its snapshot's pages and works out the rest; what it worked out
goes to a spill file of its own (the planner only reads the store, and on a first sleep of a large
store the new traits are far too many to travel back inside the plan), which the daemon copies into
the table once the sleep has committed, a slice per transaction. Losing that copy costs nothing but
the time of working the traits out again at the next sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import struct
import tempfile
from collections.abc import Generator, Sequence
from typing import IO, Any

import msgspec

from hippod.model.sleep_traits import Traits
from hippod.store.sqlite.db import Database

# The columns a snapshot's page query adds, from `sleep_traits` joined as `t`.
COLUMNS = "t.key, t.words, t.distinct_words, t.sides, t.junk, t.warning"
JOIN = "LEFT JOIN sleep_traits t ON t.row = memories.rowid"
# Rows of the spill file per transaction when the daemon copies it in.
SLICE = 5000

_INSERT = (
    "INSERT OR REPLACE INTO sleep_traits (row, key, words, distinct_words, sides, junk, warning) "
    "SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE rowid = ?)"
)
_POSITIVE, _NEGATIVE, _TAKES_PART = 1, 2, 4
_FRAME = struct.Struct("<I")
Row = tuple[int, bytes, str, str, int, str | None, str | None]


def key_of(content: str) -> bytes:
    """The hash that ties kept traits to the text they are of."""
    return hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=8).digest()


def decode(content: str, kept: Sequence[Any]) -> Traits | None:
    """The traits kept for a memory (the COLUMNS of its row), or None when none are kept for this
    very text."""
    key, words, distinct, sides, junk, warning = kept
    if key is None or key != key_of(content):
        return None
    return Traits(
        words=tuple(words.split(" ")) if words else (),
        distinct=tuple(distinct.split(" ")) if distinct else (),
        positive=bool(sides & _POSITIVE),
        negative=bool(sides & _NEGATIVE),
        takes_part=bool(sides & _TAKES_PART),
        junk=junk,
        warning=warning,
    )


def encode(row: int, content: str, traits: Traits) -> Row:
    """A `sleep_traits` row for a memory's traits (tokens never hold a space)."""
    sides = (
        (_POSITIVE if traits.positive else 0)
        | (_NEGATIVE if traits.negative else 0)
        | (_TAKES_PART if traits.takes_part else 0)
    )
    words, distinct = " ".join(traits.words), " ".join(traits.distinct)
    return row, key_of(content), words, distinct, sides, traits.junk, traits.warning


class Spill:
    """The planner's file of new `sleep_traits` rows: msgpack frames of rows, each length-prefixed."""

    def __init__(self) -> None:
        self.path: str | None = None
        self._file: IO[bytes] | None = None
        self._encode = msgspec.msgpack.Encoder().encode

    def write(self, rows: Sequence[Row]) -> None:
        if self._file is None:
            # The system's temporary folder, not the store's (watched folders see no passing files);
            # mkstemp makes it readable by this user alone, as the store is.
            handle, self.path = tempfile.mkstemp(prefix="hippod-sleep-traits-", suffix=".bin")
            self._file = os.fdopen(handle, "wb")
        data = self._encode(list(rows))
        self._file.write(_FRAME.pack(len(data)) + data)

    def close(self) -> str | None:
        """Close the file; its path, or None when nothing was written."""
        if self._file is not None:
            self._file.close()
            self._file = None
        return self.path

    def discard(self) -> None:
        self.close()
        discard(self.path)
        self.path = None


def discard(path: str | None) -> None:
    """Remove a spill file if it is still there."""
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _slices(path: str) -> Generator[list[Row], None, None]:
    """The spill file's rows, about SLICE at a time."""
    decoder = msgspec.msgpack.Decoder(list[tuple[int, bytes, str, str, int, str | None, str | None]])
    with open(path, "rb") as handle:
        rows: list[Row] = []
        while header := handle.read(_FRAME.size):
            rows += decoder.decode(handle.read(_FRAME.unpack(header)[0]))
            if len(rows) >= SLICE:
                yield rows
                rows = []
        if rows:
            yield rows


async def keep(db: Database, path: str) -> int:
    """Copy a planner's spill file into `sleep_traits`, then delete it; the rows written.

    A memory deleted since its traits were worked out gets no row; one whose text changed since gets
    a row whose key no longer matches it, which the next sleep ignores and replaces.
    """
    copied = 0
    try:
        with contextlib.closing(_slices(path)) as slices:
            while rows := await asyncio.to_thread(next, slices, None):
                async with db.transaction() as conn:
                    cursor = await conn.executemany(_INSERT, [(*row, row[0]) for row in rows])
                copied += max(0, cursor.rowcount)
    finally:
        discard(path)
    return copied
