"""`backup [<dest>]` and `restore <file>`: a copy of a store's database taken while the daemon runs,
and a store made a copy of one (README, "Backing up and restoring a store")."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_backup import BackupReply, RestoreReply
from hippoctl.protocol.wording import plural
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.store.sqlite import backup as files
from hippod.store.sqlite import sqlite_errors
from hippod.store.stores import SqliteStore, StoreRegistry, sqlite_only


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB" if n >= 1024 * 1024 else f"{max(1, n // 1024)} KiB"


async def backup(ctx: RequestContext, body: m.Backup) -> tuple[BackupReply, str]:
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    dest = await asyncio.to_thread(files.destination, store.root, body.path)
    try:
        size, count = await asyncio.to_thread(files.copy_database, store.db.path, dest)
    except sqlite3.Error as exc:
        if sqlite_errors.is_corrupt(exc):
            raise  # the store's own damage, named by dispatch
        raise HippoError("backup_dest", f"cannot write {dest}: {exc}") from None
    reply = BackupReply(store=store.root, path=dest, bytes=size, memories=count)
    return reply, f"Backed up {store.root} ({plural(count, 'memory')}, {_size(size)}) to {dest}"


# A store that cannot be opened for one of these is replaced by putting the backup's file in its place.
_UNOPENABLE = frozenset({sqlite_errors.CORRUPT, "store_too_new", "foreign_store"})


async def _open_if_usable(registry: StoreRegistry, root: str) -> SqliteStore | None:
    """The store at root, open; None when its file is corrupt, of a newer hippod (a restore after going
    back to an older version) or not hippod's."""
    try:
        return sqlite_only(await registry.open(root), "restore")
    except HippoError as exc:
        if exc.code not in _UNOPENABLE:
            raise
        return None


async def _replace(registry: StoreRegistry, store: SqliteStore, temp: str, keep: str) -> SqliteStore | None:
    """Keep a copy of the open store at `keep` and make it the backup at `temp`, as one step; None when
    its own file turns out corrupt (it is then set aside, and moved to `keep` instead of copied)."""
    try:
        await files.replace(store.db, temp, keep)
    except files.KeepFailed as failed:
        cause = failed.__cause__
        named = await registry.corrupt_error(cause) if cause is not None else None
        if named is None or store.root in registry.stores:
            raise cause or failed from None
        return None
    store.reloaded()
    return store


async def restore(ctx: RequestContext, body: m.Restore) -> tuple[RestoreReply, str]:
    registry = ctx.state.registry
    if ctx.request.global_store:
        root: str | None = registry.global_root
    else:
        root = registry.project_root_for(ctx.request.cwd)
    if root is None:
        raise HippoError(
            "no_project_store",
            f"no project store above {ctx.request.cwd}: restore --global replaces the global store, "
            "or hippoctl init makes a project store to restore into",
        )
    # No sleep of the store runs while it is replaced.
    async with ctx.state.sleep_locks.setdefault(root, asyncio.Lock()):
        store = await _open_if_usable(registry, root)
        page_size = None if store is None else await files.page_size(store.db)
        temp, from_schema = await asyncio.to_thread(files.candidate, body.path, root, page_size)
        try:
            await asyncio.to_thread(_record, ctx, temp, body.path, from_schema)
            keep = await asyncio.to_thread(files.destination, root, None, "before-restore")
            if store is not None:
                store = await _replace(registry, store, temp, keep)
            if store is None:
                await registry.swap_file(root, temp, keep)
                store = sqlite_only(await registry.open(root), "restore")
        finally:
            for leftover in (temp, temp + "-wal", temp + "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover)
    return await _restored(store, body.path, from_schema, keep)


def _record(ctx: RequestContext, temp: str, source: str, schema: int) -> None:
    files.record_restore(temp, tenant=ctx.tenant, actor=ctx.actor, source=source, schema=schema)


async def _restored(store: SqliteStore, source: str, from_schema: int, keep: str) -> tuple[RestoreReply, str]:
    rows = list(await store.db.reader.execute_fetchall("SELECT count(*) FROM memories"))
    count = int(rows[0][0])
    reply = RestoreReply(
        store=store.root,
        source=source,
        memories=count,
        schema=store.schema,
        from_schema=from_schema,
        kept=keep,
    )
    migrated = (
        f", migrated from schema {from_schema} to {store.schema}" if from_schema != store.schema else ""
    )
    text = (
        f"Restored {store.root} from {source} ({plural(count, 'memory')}{migrated}); "
        f"the store as it was is kept in {keep}"
    )
    return reply, text
