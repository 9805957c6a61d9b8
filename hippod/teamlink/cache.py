"""A laptop's copy of its team's memories, so recall finds them with the server away.

The copy is a SQLite store in `team-cache/` beside the global store, read by recall like the global
store (its results labelled [team]). Its rows are the server's, kept current by `pull`: each page of
`GET /v1/team/changes` is applied in one transaction, and the cursor to go on from is kept in the
copy's own meta table once a sync has read every page. A memory the team rejected or forgot leaves
the copy at the next sync. All rows are kept under one tenant, TENANT, whatever the team's is.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from hippod.base import thread_stop
from hippod.model.memory import COLUMNS, Memory
from hippod.store.sqlite import memories, team_cache
from hippod.store.stores import SqliteStore, sqlite_only
from hippod.teamlink import calls
from hippod.teamlink.membership import Membership

if TYPE_CHECKING:
    from hippod.store.stores import StoreRegistry

FOLDER = "team-cache"
TENANT = "team"
CURSOR_KEY = "team_cursor"
PAGE = 500


def root(global_root: str) -> str:
    return os.path.join(global_root, FOLDER)


async def open_cache(registry: StoreRegistry, *, create: bool) -> SqliteStore | None:
    """The copy's store; None when there is none yet and `create` is false."""
    folder = root(registry.global_root)
    if not os.path.isdir(folder):
        if not create:
            return None
        os.makedirs(folder, mode=0o700, exist_ok=True)
    return sqlite_only(await registry.open(folder), "the team's copy")


async def drop(registry: StoreRegistry) -> None:
    """Close and delete the copy (leaving the team)."""
    folder = root(registry.global_root)
    await registry.close(folder)
    await asyncio.to_thread(shutil.rmtree, folder, True)


def _memory(fields: dict[str, Any]) -> Memory:
    values = {key: fields[key] for key in COLUMNS}
    values["tenant_id"] = TENANT
    return Memory(**values)


async def pull(registry: StoreRegistry, joined: Membership) -> calls.Answer:
    """Bring the copy up to the server's changes; the last answer (status 200 when all went well)."""
    store = await open_cache(registry, create=True)
    assert store is not None
    start = await memories.get_meta(store.db.reader, CURSOR_KEY)
    after, horizon = start, None
    while True:
        query = urlencode({"limit": PAGE, **({"after": after} if after else {})})
        answer = await thread_stop.detached(calls.get, joined.url, joined.key, f"/v1/team/changes?{query}")
        if answer.status != 200:
            return answer
        page = json.loads(answer.body)
        changed = [_memory(fields) for fields in page["memories"]]
        horizon = horizon or str(page["horizon"])
        following = page["next"]
        async with store.db.transaction() as conn:
            await team_cache.apply(conn, changed, page["deleted"])
            if following is None:
                # The first page's horizon: nothing that committed after this sync began is missed.
                await memories.set_meta(conn, CURSOR_KEY, horizon)
        # Embedded for hybrid recall like any store's memories; not `written()`, which would also
        # count them towards an automatic sleep: the copy is never consolidated here.
        store.embed_queue.changed_ids(memory.id for memory in changed)
        if following is None:
            return answer
        after = following
