"""The buffer mirrors of continuity data: `buffer/active-task.md` and `buffer/recent-session.md`.

Each is rewritten after the commit that changed it, from a fresh read of the committed rows, one
writer per store at a time: whichever write runs last shows the latest state.
"""

from __future__ import annotations

import asyncio
import logging

from hippod.base.locks import LockPerObject
from hippod.continuity import render
from hippod.mirrors import mirror_files
from hippod.store.sqlite import continuity
from hippod.store.stores import SqliteStore

log = logging.getLogger("hippod.continuity")

ACTIVE_TASK = "buffer/active-task.md"
RECENT_SESSION = "buffer/recent-session.md"
SESSION_FILE_EVENTS = 20

_lock: LockPerObject[SqliteStore] = LockPerObject()


async def _write(store: SqliteStore, relative: str, text: str) -> None:
    # A mirror is a convenience for people: a failure to write it is logged, never the request's.
    try:
        await asyncio.to_thread(mirror_files.write, store.root, relative, text)
    except OSError:
        log.exception("writing %s under %s failed", relative, store.root)


async def active_task(store: SqliteStore, tenant: str) -> None:
    """Rewrite buffer/active-task.md from the active snapshot (after every snapshot change)."""
    async with _lock(store):
        snapshot = await continuity.active_snapshot(store.db.reader, tenant)
        await _write(store, ACTIVE_TASK, render.snapshot_block(snapshot) + "\n")


async def recent_session(store: SqliteStore, tenant: str, session_id: str) -> None:
    """Rewrite buffer/recent-session.md with the session's 20 latest events (after each append)."""
    async with _lock(store):
        events = await continuity.recent_events(
            store.db.reader, tenant, session_id=session_id, limit=SESSION_FILE_EVENTS
        )
        await _write(store, RECENT_SESSION, render.session_file(session_id, events))
