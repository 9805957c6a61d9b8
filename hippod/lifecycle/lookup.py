"""Finding a memory by id in the stores a request reads."""

from __future__ import annotations

from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.model.memory import Memory
from hippod.store.stores import Store


async def find_memory(ctx: RequestContext, memory_id: str) -> tuple[Store, Memory]:
    """Look an id up in the target store, then (for a project request) the global store."""
    store = await ctx.target_store(write=False)
    found = await store.rows.get(store.db.reader, ctx.tenant, memory_id)
    if found is None and store.kind == "project":
        store = await ctx.global_store()
        found = await store.rows.get(store.db.reader, ctx.tenant, memory_id)
    if found is None:
        raise HippoError("not_found", f"no memory with id {memory_id}")
    return store, found
