"""Bringing a store's mirror folders back in line with its database (memory-model.md §2).

A mirror pass runs after its commit, so a daemon killed in between, or a disk that filled up, can
leave a memory without its file, or the file of a rejected or forgotten memory behind. Healing
writes every missing or stale mirror from the committed rows and removes the mirrors (and
leftover temporary files) that no row accounts for. Only names hippod writes are touched: the
continuity files in `buffer/` and anything that is not `*.md` or a temporary file stay.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import aiosqlite

from hippod.mirrors import conflict_mirror, mirror_files
from hippod.model.memory import COLUMNS, Memory
from hippod.store.memory_codec import row_to_memory

log = logging.getLogger("hippod.mirrors")

MEMORY_DIRS = ("episodic", "semantic", "trace", "buffer")
DORMANT_DIR = "dormant"
CONFLICT_DIR = "conflicts"
FOLDERS = (*MEMORY_DIRS, DORMANT_DIR, CONFLICT_DIR)
# Continuity mirrors share buffer/ with buffer-layer memories; they are kept by their own writer.
_CONTINUITY = ("active-task", "recent-session")
BATCH = 1000
_YEAR = re.compile(r"[0-9]{4}")
_MONTH = re.compile(r"[0-9]{2}")
_SELECT = ", ".join(COLUMNS)


@dataclass
class Healed:
    """What one healing pass did: files written (missing or stale), removed, and failed to write."""

    written: int = 0
    removed: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)


def _ours(folder: str, name: str) -> bool:
    """Whether a file in a mirror folder is one hippod writes there (a mirror or a temporary file)."""
    bare = name.lstrip(".")
    if folder == "buffer" and bare.startswith(_CONTINUITY):
        return False
    return name.endswith(".md") or name.endswith(mirror_files.TEMP_SUFFIX)


async def wanted(conn: aiosqlite.Connection, *, memories: bool = True) -> dict[str, set[str]]:
    """The mirror file names the database calls for, by folder (with `memories` False, only the
    dormant and conflict ones: the day layout counts its own)."""
    names: dict[str, set[str]] = {folder: set() for folder in FOLDERS}
    if memories:
        for memory_id, layer in await conn.execute_fetchall("SELECT id, layer FROM memories"):
            names.setdefault(str(layer), set()).add(f"{memory_id}.md")
    for (memory_id,) in await conn.execute_fetchall("SELECT id FROM dormant_memories"):
        names[DORMANT_DIR].add(f"{memory_id}.md")
    for (number,) in await conn.execute_fetchall("SELECT id FROM memory_conflicts WHERE status = 'open'"):
        names[CONFLICT_DIR].add(os.path.basename(conflict_mirror.path(int(number))))
    return names


async def _batches(conn: aiosqlite.Connection, table: str) -> AsyncIterator[list[Any]]:
    """Every row of memories or dormant_memories, in COLUMNS order, a thousand at a time by rowid."""
    last = 0
    while True:
        rows = list(
            await conn.execute_fetchall(
                f"SELECT {_SELECT}, rowid FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT ?", (last, BATCH)
            )
        )
        if not rows:
            return
        last = int(rows[-1][-1])
        yield rows


def _heal_rows(
    root: str, rows: list[Any], folder: str | None, render: Callable[[Memory], str], healed: Healed
) -> list[tuple[str, str]]:
    """Render a batch of rows (in their layer's folder, or in `folder`) and write those that differ;
    the (folder, name) of each. Run in a worker thread: decoding and rendering a large store's rows
    on the event loop would hold up every request for seconds."""
    texts: dict[tuple[str, str], str] = {}
    for row in rows:
        memory = row_to_memory(row)
        texts[(folder or memory.layer, f"{memory.id}.md")] = render(memory)
    _sync(root, texts, healed)
    return list(texts)


def _sync(root: str, texts: dict[tuple[str, str], str], healed: Healed) -> None:
    """Write each (folder, name) whose file is missing or differs from its text."""
    by_folder: dict[str, dict[str, str]] = {}
    for (folder, name), text in texts.items():
        by_folder.setdefault(folder, {})[name] = text
    for folder, files in by_folder.items():
        try:
            with mirror_files.folder(root, folder) as fd:
                for name, text in files.items():
                    if mirror_files.read_in(fd, name) == text:
                        continue
                    try:
                        mirror_files.write_in(fd, name, text)
                        healed.written += 1
                    except OSError as exc:
                        _failed(healed, os.path.join(root, folder, name), exc, 1)
        except OSError as exc:
            _failed(healed, os.path.join(root, folder), exc, len(files))


def _failed(healed: Healed, path: str, exc: OSError, count: int) -> None:
    healed.failed += count
    if len(healed.errors) < 5:
        healed.errors.append(mirror_files.describe(path, exc))


def remove_extra(root: str, names: dict[str, set[str]], healed: Healed, folders: tuple[str, ...]) -> None:
    """Remove hippod's files in these mirror folders that no row accounts for."""
    for folder in folders:
        try:
            with mirror_files.folder(root, folder, create=False) as fd:
                for name, _ in mirror_files.entries_in(fd):
                    if _ours(folder, name) and name not in names.get(folder, set()):
                        healed.removed += mirror_files.remove_in(fd, name)
        except FileNotFoundError:
            continue
        except OSError as exc:
            _failed(healed, os.path.join(root, folder), exc, 0)


def count_missing(root: str, names: dict[str, set[str]]) -> int:
    """How many of the mirrors the database calls for are not on disk as plain files."""
    missing = 0
    for folder, wanted_names in names.items():
        if not wanted_names:
            continue
        try:
            with mirror_files.folder(root, folder, create=False) as fd:
                present = {name for name, plain in mirror_files.entries_in(fd) if plain}
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
                raise
            present = set()
        missing += len(wanted_names - present)
    return missing


def remove_day_files(root: str, folder: str, keep: set[str], healed: Healed) -> None:
    """Remove hippod's files in the day layout's `YYYY/MM/` folders under a layer folder but those
    in `keep` (paths relative to the layer folder), and the year and month folders left empty."""
    try:
        for year in _subfolders(root, folder, _YEAR):
            for month in _subfolders(root, f"{folder}/{year}", _MONTH):
                with mirror_files.folder(root, f"{folder}/{year}/{month}", create=False) as fd:
                    for name, _ in mirror_files.entries_in(fd):
                        if _ours(folder, name) and f"{year}/{month}/{name}" not in keep:
                            healed.removed += mirror_files.remove_in(fd, name)
                prune_day_folders(root, folder, year, month)
    except FileNotFoundError:
        return
    except OSError as exc:
        _failed(healed, os.path.join(root, folder), exc, 0)


def _subfolders(root: str, folder: str, pattern: re.Pattern[str]) -> list[str]:
    """The plain subfolders of root/folder whose names match the pattern."""
    with mirror_files.folder(root, folder, create=False) as where:
        return [name for name in mirror_files.folders_in(where) if pattern.fullmatch(name)]


def prune_day_folders(root: str, folder: str, year: str, month: str) -> None:
    """Remove a layer folder's `year/month` folder once empty, then its year folder once empty."""
    with contextlib.suppress(FileNotFoundError, mirror_files.LinkRefused):
        with mirror_files.folder(root, f"{folder}/{year}", create=False) as year_fd:
            mirror_files.remove_in(year_fd, month, folder=True)
        with mirror_files.folder(root, folder, create=False) as layer_fd:
            mirror_files.remove_in(layer_fd, year, folder=True)


async def reconcile(
    conn: aiosqlite.Connection,
    root: str,
    render: Callable[[Memory], str],
    *,
    memories: bool = True,
    healed: Healed | None = None,
) -> Healed:
    """Heal the mirrors of the store at root from its database (read through conn); with `memories`
    False only the dormant and conflict ones, added to what the day layout's healing did (`healed`,
    mirrors/mirror_days.py).

    The names kept are those of the rows read here, so a file this pass writes is never taken
    for a stray; a row that changes meanwhile has its own mirror pass queued after this one.
    """
    healed = healed or Healed()
    names: dict[str, set[str]] = {folder: set() for folder in FOLDERS}
    for table in ("memories", "dormant_memories") if memories else ("dormant_memories",):
        folder = None if table == "memories" else DORMANT_DIR
        async for rows in _batches(conn, table):
            for where, name in await asyncio.to_thread(_heal_rows, root, rows, folder, render, healed):
                names.setdefault(where, set()).add(name)
    conflicts: dict[tuple[str, str], str] = {}
    for path, text in (await conflict_mirror.files(conn)).items():
        if text is not None:
            conflicts[(CONFLICT_DIR, os.path.basename(path))] = text
            names[CONFLICT_DIR].add(os.path.basename(path))
    await asyncio.to_thread(_sync, root, conflicts, healed)
    folders = FOLDERS if memories else (DORMANT_DIR, CONFLICT_DIR)
    await asyncio.to_thread(remove_extra, root, names, healed, folders)
    if memories:  # the day layout's files, left by a store that used it
        for folder in MEMORY_DIRS:
            await asyncio.to_thread(remove_day_files, root, folder, set(), healed)
    _log_healed(root, healed)
    return healed


def _log_healed(root: str, healed: Healed) -> None:
    """One line when a healing pass changed or failed anything."""
    if healed.written or healed.removed or healed.failed:
        log.info(
            "mirrors of %s healed: %d written, %d removed, %d failed%s",
            root,
            healed.written,
            healed.removed,
            healed.failed,
            "".join(f"; {e}" for e in healed.errors),
        )
