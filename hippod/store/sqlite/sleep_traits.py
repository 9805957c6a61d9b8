"""The traits a sleep keeps of each memory's text (hippod.model.sleep_traits), in `sleep_traits`.

A sleep's planner reads them with its snapshot's pages and works out the rest; what it worked out
goes to a spill file the daemon named (the planner only reads the store, and on a first sleep of a
large store the new traits are far too many to travel back inside the plan), which the daemon copies
into the table once the sleep has committed, a slice per transaction. Losing that copy costs nothing but
the time of working the traits out again at the next sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import struct
import tempfile
from collections.abc import Sequence
from typing import IO, Any

import msgspec

from hippod.model.sleep_traits import Traits
from hippod.store.sqlite.db import Database

# The columns a snapshot's page query adds, from `sleep_traits` joined as `t`.
COLUMNS = "t.key, t.words, t.distinct_words, t.sides, t.junk, t.warning"
JOIN = "LEFT JOIN sleep_traits t ON t.row = memories.rowid"
# The folder of the spill files, in the daemon's home.
SPILL_DIR = "sleep-spill"
# Rows of the spill file per transaction when the daemon copies it in.
SLICE = 5000

# A row is written only while its memory holds the very text its traits are of (`key_of` as an SQL
# function of the copying connection): a text changed or blanked since the plan read it, or a rowid
# a new memory took, gets none of the old text's tokens.
_KEY = "sleep_traits_key"
_INSERT = (
    "INSERT OR REPLACE INTO sleep_traits (row, key, words, distinct_words, sides, junk, warning) "
    "SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS "
    f"(SELECT 1 FROM memories WHERE rowid = ? AND {_KEY}(content) = ?)"
)
_POSITIVE, _NEGATIVE, _TAKES_PART = 1, 2, 4
# Which rules made the kept traits (model/sleep_traits.py): raise it when tokenizing, the stopwords,
# the conflict phrases or the junk rules change, and every kept row stops matching its text.
RULES_VERSION = 1
_RULES = f"traits{RULES_VERSION}".encode()
_FRAME = struct.Struct("<I")
Row = tuple[int, bytes, str, str, int, str | None, str | None]
_DECODE = msgspec.msgpack.Decoder(list[Row]).decode


def key_of(content: str) -> bytes:
    """The hash that ties kept traits to the text they are of, and to the rules that made them."""
    digest = hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=8, person=_RULES)
    return digest.digest()


def decode(content: str, kept: Sequence[Any]) -> Traits | None:
    """The traits kept for a memory (the COLUMNS of its row), or None when none are kept for this
    very text."""
    key, words, distinct, sides, junk, warning = kept
    if key is None or key != key_of(content):
        return None
    return Traits(
        words=words or "",
        distinct=distinct or "",
        positive=bool(sides & _POSITIVE),
        negative=bool(sides & _NEGATIVE),
        takes_part=bool(sides & _TAKES_PART),
        junk=junk,
        warning=warning,
    )


def encode(row: int, content: str, traits: Traits) -> Row:
    """A `sleep_traits` row for a memory's traits."""
    sides = (
        (_POSITIVE if traits.positive else 0)
        | (_NEGATIVE if traits.negative else 0)
        | (_TAKES_PART if traits.takes_part else 0)
    )
    return row, key_of(content), traits.words, traits.distinct, sides, traits.junk, traits.warning


class Spill:
    """The planner's file of new `sleep_traits` rows, at a path the daemon chose (None: keep none):
    msgpack frames of rows, each length-prefixed. Failing to write it only stops the spilling: the
    traits are worked out again at the next sleep."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.written = 0
        self._file: IO[bytes] | None = None
        self._encode = msgspec.msgpack.Encoder().encode

    def write(self, rows: Sequence[Row]) -> None:
        if self.path is None:
            return
        try:
            if self._file is None:
                self._file = open(self.path, "wb")  # noqa: SIM115 (open for the planner's length)
            data = self._encode(list(rows))
            self._file.write(_FRAME.pack(len(data)) + data)
            self.written += len(rows)
        except OSError:
            self.written = 0
            self.path = None  # what was written is dropped with the rest by the daemon
            self.close()

    def absorb(self, path: str | None, rows: int) -> None:
        """Append the frames of another planning process's spill file (`rows` rows), then remove it."""
        try:
            if path is None or self.path is None or not rows:
                return
            if self._file is None:
                self._file = open(self.path, "wb")  # noqa: SIM115 (open for the planner's length)
            with open(path, "rb") as other:
                shutil.copyfileobj(other, self._file)
            self.written += rows
        except OSError:
            self.written = 0
            self.path = None
            self.close()
        finally:
            discard(path)

    def close(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            try:
                file.close()
            except OSError:
                self.written = 0


def new_path(folder: str) -> str:
    """A path for a planner's spill file in `folder` (the daemon's home's SPILL_DIR), made by mkstemp
    so that this user alone can read it, as the store. A file there of another process, left by a
    daemon that died before removing it, is removed first: one daemon serves a home."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    mine = f"traits-{os.getpid()}-"
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            if not name.startswith(mine):
                discard(os.path.join(folder, name))
    handle, path = tempfile.mkstemp(prefix=mine, suffix=".bin", dir=folder)
    os.close(handle)
    return path


def discard(path: str | None) -> None:
    """Remove a spill file if it is still there."""
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _slice(path: str, offset: int) -> tuple[list[Row], int]:
    """About SLICE rows of the spill file from `offset`, and the offset after them. Each call opens
    the file itself, so a cancelled copy leaves no handle shared with a thread still reading."""
    rows: list[Row] = []
    with open(path, "rb") as handle:
        handle.seek(offset)
        while len(rows) < SLICE and (header := handle.read(_FRAME.size)):
            rows += _DECODE(handle.read(_FRAME.unpack(header)[0]))
        return rows, handle.tell()


async def keep(db: Database, path: str) -> int:
    """Copy a planner's spill file into `sleep_traits`, then delete it; the rows written.

    A memory deleted since its traits were worked out gets no row, nor does one whose text changed
    since: each row's key is checked against its memory's text in the transaction that writes it.
    """
    copied, offset = 0, 0
    try:
        while True:
            rows, offset = await asyncio.to_thread(_slice, path, offset)
            if not rows:
                return copied
            async with db.transaction() as conn:
                await conn.create_function(_KEY, 1, key_of, deterministic=True)
                cursor = await conn.executemany(_INSERT, [(*row, row[0], row[1]) for row in rows])
            copied += max(0, cursor.rowcount)
    finally:
        discard(path)
