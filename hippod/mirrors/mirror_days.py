"""The day layout of the memory mirrors (`config.json` `mirrors.layout: "day"`): one markdown file per
layer and day of creation, `episodic/2026/12/2026-12-03.md`, instead of one file per memory.

A store of a million memories makes a million files in the per-memory layout, and every `git status`
in a project that commits them stats each one (bench/RESULTS.md, "Mirrors: what a million files
cost"). A day file holds that day's memories of one layer in the order they were stored, at most PART
of them; the rest go to `2026-12-03.p2.md` and on. New memories are appended to the day's last part;
any other change rewrites the parts of its day, and only those whose text changed. Which days lost a
memory (deleted, or moved to another layer) is read from `mirror_days`, which triggers fill in the
changing transaction (migration 12). The fields a recall changes are left out
(mirror_text.BOOKKEEPING), so recalls rewrite nothing. Dormant memories and conflicts keep their
per-memory files: only live memories grow without bound.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite

from hippod.mirrors import mirror_files, mirror_heal
from hippod.mirrors.mirror_heal import MEMORY_DIRS, Healed
from hippod.mirrors.mirror_text import UNDATED, day_file, day_header, day_of, render, section
from hippod.model.memory import COLUMNS, Memory
from hippod.store.memory_codec import row_to_memory

PART = 1000
_SELECT = ", ".join(COLUMNS)
_CHUNK = 500  # ids or rowids per IN (...) list
_DATED = "created GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*'"

Key = tuple[str, str]  # (layer, day)
_Item = tuple[int, "Memory | Sequence[Any]"]  # (rowid, a row read back or the Memory handed over)


@dataclass(frozen=True, slots=True)
class _Tail:
    """A (layer, day)'s files as this writer last wrote them: new memories are appended to the last
    part while it is still that long."""

    rowid: int  # the highest rowid in the day's files
    count: int  # memories in the day's files, PART a part: the last part is the count's
    size: int  # the last part's size in bytes

    @property
    def part(self) -> int:
        return (self.count - 1) // PART + 1


class DayMirrors:
    """The day files of one store, written by its MirrorWriter's passes (never two at once)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._tails: dict[Key, _Tail] = {}
        # The highest mirror_days number already acted on; None until the first heal reads it.
        self.mark: int | None = None

    def forget(self) -> None:
        """Start again from a heal (the layout changed)."""
        self._tails.clear()
        self.mark = None

    async def write(self, conn: aiosqlite.Connection, changed: Mapping[str, Memory | None]) -> None:
        """Bring the day files of these changed memories (the Memory as committed, or None to read it
        back), and those of the days that lost one, up to date (after a heal: `mark` is set)."""
        dirty: dict[Key, list[int]] = {}
        given: dict[int, Memory] = {}
        for rowid, memory_id, layer, created in await _locate(conn, changed):
            dirty.setdefault((str(layer), day_of(str(created))), []).append(int(rowid))
            memory = changed[str(memory_id)]
            if memory is not None and memory.layer == layer and memory.created == created:
                given[int(rowid)] = memory
        rebuild = await self._lost(conn)
        appends: dict[Key, list[int]] = {}
        for key, rowids in dirty.items():
            tail = self._tails.get(key)
            if key in rebuild or tail is None or min(rowids) <= tail.rowid:
                rebuild.add(key)
            else:
                appends[key] = sorted(rowids)
        for key, rowids in appends.items():
            if not await self._append(conn, key, rowids, given):
                rebuild.add(key)  # the file changed behind our back
        by_day: dict[str, set[str]] = {}
        for layer, day in rebuild:
            by_day.setdefault(day, set()).add(layer)
        for day, layers in sorted(by_day.items()):
            await self._rebuild(conn, day, layers, Healed())

    async def reconcile(self, conn: aiosqlite.Connection) -> Healed:
        """Heal: rewrite every day file whose text differs from the database, remove those no memory
        accounts for (and per-memory mirrors left from the other layout), then heal the dormant and
        conflict mirrors."""
        self._tails.clear()
        # Read before the rows: a loss recorded meanwhile is acted on again by the next pass.
        self.mark = await _last_mark(conn)
        healed = Healed()
        by_day: dict[str, set[str]] = {}
        for layer, created in await conn.execute_fetchall(
            "SELECT DISTINCT layer, substr(created, 1, 10) FROM memories"
        ):
            by_day.setdefault(day_of(str(created)), set()).add(str(layer))
        keep: dict[str, set[str]] = {folder: set() for folder in MEMORY_DIRS}
        for day, layers in sorted(by_day.items()):
            for path in await self._rebuild(conn, day, layers, healed):
                layer, rest = path.split("/", 1)
                keep.setdefault(layer, set()).add(rest)
        top = {folder: {n for n in names if "/" not in n} for folder, names in keep.items()}
        await asyncio.to_thread(mirror_heal.remove_extra, self.root, top, healed, MEMORY_DIRS)
        for folder in MEMORY_DIRS:
            await asyncio.to_thread(mirror_heal.remove_day_files, self.root, folder, keep[folder], healed)
        return await mirror_heal.reconcile(conn, self.root, render, memories=False, healed=healed)

    async def _lost(self, conn: aiosqlite.Connection) -> set[Key]:
        """The (layer, day)s that lost a memory since the last pass."""
        sql = "SELECT n, layer, day FROM mirror_days WHERE n > ?"
        rows = list(await conn.execute_fetchall(sql, (self.mark or 0,)))
        if rows:
            self.mark = max(int(row[0]) for row in rows)
        return {(str(layer), day_of(str(day))) for _, layer, day in rows}

    async def _append(
        self, conn: aiosqlite.Connection, key: Key, rowids: list[int], given: Mapping[int, Memory]
    ) -> bool:
        """Append these new memories (all stored after the day's last one) to the day's last part and
        new parts after it; False when the last part is not as this writer left it. The memories
        handed over are used as they are; only the others are read back (an import hands over
        thousands, and reading them again would hold the reader that recalls wait for)."""
        tail = self._tails[key]
        items: list[_Item] = [
            (int(row[-1]), row) for row in await _rows(conn, [r for r in rowids if r not in given])
        ]
        items += [(r, given[r]) for r in rowids if r in given]
        if not items:
            return True
        new = await asyncio.to_thread(self._append_files, key, tail, items)
        if new is None:
            del self._tails[key]
            return False
        self._tails[key] = _Tail(max(rowids), len(items) + tail.count, new)
        return True

    def _append_files(self, key: Key, tail: _Tail, items: list[_Item]) -> int | None:
        """The last part's size after appending, or None (see _append). Worker thread."""
        layer, day = key
        texts = [section(memory) for memory in _in_order(items)]
        part, size = tail.part, tail.size
        room = part * PART - tail.count
        if room > 0:
            parent, name = os.path.split(day_file(layer, day, part))
            with mirror_files.folder(self.root, parent) as where:
                grown = mirror_files.append_in(where, name, "".join(texts[:room]), size)
            if grown is None:
                return None
            size = grown
            texts = texts[room:]
        for start in range(0, len(texts), PART):
            part += 1
            chunk = texts[start : start + PART]
            text = day_header(layer, day, part) + "".join(chunk)
            mirror_files.write(self.root, day_file(layer, day, part), text)
            size = len(text.encode("utf-8"))
        return size

    async def _rebuild(
        self, conn: aiosqlite.Connection, day: str, layers: set[str], healed: Healed
    ) -> list[str]:
        """Rewrite the parts of these layers' files of one day whose text differs from the database,
        and remove parts no longer needed; the paths of the parts kept."""
        by_layer = await _day_rowids(conn, day)
        kept: list[str] = []
        for layer in sorted(layers):
            rowids = by_layer.get(layer, [])
            part = size = 0
            for start in range(0, len(rowids), PART):
                part += 1
                rows = await _rows(conn, rowids[start : start + PART])
                size = await asyncio.to_thread(self._sync_part, layer, day, part, rows, healed)
                kept.append(day_file(layer, day, part))
            await asyncio.to_thread(self._drop_parts, layer, day, part + 1, healed)
            if rowids:
                self._tails[(layer, day)] = _Tail(rowids[-1], len(rowids), size)
            else:
                self._tails.pop((layer, day), None)
        return kept

    def _sync_part(self, layer: str, day: str, part: int, rows: list[Sequence[Any]], healed: Healed) -> int:
        """Write one part when its text differs from the file; its size in bytes. Worker thread."""
        items: list[_Item] = [(int(row[-1]), row) for row in rows]
        text = day_header(layer, day, part) + "".join(section(memory) for memory in _in_order(items))
        parent, name = os.path.split(day_file(layer, day, part))
        with mirror_files.folder(self.root, parent) as where:
            if mirror_files.read_in(where, name) != text:
                mirror_files.write_in(where, name, text)
                healed.written += 1
        return len(text.encode("utf-8"))

    def _drop_parts(self, layer: str, day: str, first: int, healed: Healed) -> None:
        """Remove the day's parts from `first` on (all of them when the day has none left). Worker thread."""
        part = first
        while True:
            parent, name = os.path.split(day_file(layer, day, part))
            try:
                with mirror_files.folder(self.root, parent, create=False) as where:
                    if not mirror_files.remove_in(where, name):
                        break
            except (FileNotFoundError, mirror_files.LinkRefused):
                break
            healed.removed += 1
            part += 1
        if part > first == 1 and day != UNDATED:
            # The day is empty now: its month and year folders go with it once empty too.
            mirror_heal.prune_day_folders(self.root, layer, day[:4], day[5:7])


async def wanted(conn: aiosqlite.Connection) -> dict[str, set[str]]:
    """The mirror files the database calls for in the day layout, by folder: day files, then the
    dormant and conflict mirrors."""
    counts: dict[Key, int] = {}
    for layer, created, count in await conn.execute_fetchall(
        "SELECT layer, substr(created, 1, 10), count(*) FROM memories GROUP BY 1, 2"
    ):
        key = (str(layer), day_of(str(created)))
        counts[key] = counts.get(key, 0) + int(count)
    names = await mirror_heal.wanted(conn, memories=False)
    for (layer, day), count in counts.items():
        for part in range(1, (count + PART - 1) // PART + 1):
            parent, name = os.path.split(day_file(layer, day, part))
            names.setdefault(parent, set()).add(name)
    return names


async def _last_mark(conn: aiosqlite.Connection) -> int:
    rows = list(await conn.execute_fetchall("SELECT coalesce(max(n), 0) FROM mirror_days"))
    return int(rows[0][0])


async def _locate(conn: aiosqlite.Connection, ids: Collection[str]) -> list[Sequence[Any]]:
    """(rowid, id, layer, created) of each of these ids still live."""
    found: list[Sequence[Any]] = []
    listed = list(ids)
    for start in range(0, len(listed), _CHUNK):
        chunk = listed[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        found += await conn.execute_fetchall(
            f"SELECT rowid, id, layer, created FROM memories WHERE id IN ({marks})", chunk
        )
    return found


async def _day_rowids(conn: aiosqlite.Connection, day: str) -> dict[str, list[int]]:
    """The rowids of one day's memories, in order, by layer. A dated day is read through the index on
    (tenant_id, pinned, created), one range per (tenant, pinned) pair; the layer index would read
    every memory of the layer instead."""
    rows: list[Sequence[Any]] = []
    if day == UNDATED:
        rows += await conn.execute_fetchall(f"SELECT rowid, layer FROM memories WHERE NOT ({_DATED})")
    else:
        for tenant, pinned in await _tenant_pins(conn):
            rows += await conn.execute_fetchall(
                "SELECT rowid, layer FROM memories INDEXED BY memories_pinned_created "
                "WHERE tenant_id = ? AND pinned = ? AND created >= ? AND created < ?",
                (tenant, pinned, day, day + "\uffff"),
            )
    by_layer: dict[str, list[int]] = {}
    for rowid, layer in rows:
        by_layer.setdefault(str(layer), []).append(int(rowid))
    for rowids in by_layer.values():
        rowids.sort()
    return by_layer


async def _tenant_pins(conn: aiosqlite.Connection) -> list[tuple[str, int]]:
    """Every (tenant_id, pinned) pair in the store, found by skipping along the index rather than
    reading every row."""
    pairs: list[tuple[str, int]] = []
    tenant = await _one(conn, "SELECT min(tenant_id) FROM memories", ())
    while tenant is not None:
        pinned = await _one(conn, "SELECT min(pinned) FROM memories WHERE tenant_id = ?", (tenant,))
        while pinned is not None:
            pairs.append((str(tenant), int(pinned)))
            pinned = await _one(
                conn, "SELECT min(pinned) FROM memories WHERE tenant_id = ? AND pinned > ?", (tenant, pinned)
            )
        tenant = await _one(conn, "SELECT min(tenant_id) FROM memories WHERE tenant_id > ?", (tenant,))
    return pairs


async def _one(conn: aiosqlite.Connection, sql: str, params: Sequence[Any]) -> Any:
    rows = list(await conn.execute_fetchall(sql, params))
    return rows[0][0] if rows else None


async def _rows(conn: aiosqlite.Connection, rowids: Sequence[int]) -> list[Sequence[Any]]:
    """The rows (COLUMNS, then rowid) of these rowids still live. They are made into Memory objects
    in the worker thread that renders them, not on the event loop."""
    rows: list[Sequence[Any]] = []
    for start in range(0, len(rowids), _CHUNK):
        chunk = list(rowids[start : start + _CHUNK])
        marks = ", ".join("?" * len(chunk))
        rows += await conn.execute_fetchall(
            f"SELECT {_SELECT}, rowid FROM memories WHERE rowid IN ({marks})", chunk
        )
    return rows


def _in_order(items: list[_Item]) -> list[Memory]:
    """The memories of (rowid, row or Memory) pairs, in rowid order."""
    items.sort(key=lambda item: item[0])
    return [item if isinstance(item, Memory) else row_to_memory(item) for _, item in items]
