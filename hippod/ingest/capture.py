"""Heuristic capture from conversation text (ingest.md §3): the items extraction finds, stored as new
memories unless a live memory or a tombstone already holds them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import aiosqlite

from hippoctl.protocol.replies_capture import CapturedItem
from hippod.base import clock
from hippod.calls.request import RequestContext
from hippod.ingest.extract import Item, extract, store_key
from hippod.lifecycle.new_memory import fresh_memory
from hippod.model.memory import Memory
from hippod.model.secrets import looks_secret
from hippod.store.sqlite import memories, spool_marks
from hippod.store.sqlite.contents import live_contents
from hippod.store.stores import SqliteStore


@dataclass
class Captured:
    """What one capture stored (or would store) and what it left out."""

    items: list[CapturedItem] = field(default_factory=list)
    skipped: int = 0
    rejected: int = 0
    secrets: int = 0


def _tags(item: Item) -> list[str]:
    """[<category>, captured]; the `error` category is itself the tag that gives errors their
    730-day half-life and negative valence."""
    return [item.category, "captured"]


def _keys(contents: list[str]) -> set[str]:
    return {store_key(content) for content in contents}


async def known_keys(conn: aiosqlite.Connection, tenant: str) -> set[str]:
    """The store key of every live memory of the tenant, for the exact-match check of ingest.md §3.

    Keying touches every memory of the store, so it runs in a worker thread: a large store would
    otherwise hold the event loop (and every other request) for a noticeable time.
    """
    return await asyncio.to_thread(_keys, await live_contents(conn, tenant))


async def capture_text(
    ctx: RequestContext,
    store: SqliteStore,
    text: str,
    *,
    dry_run: bool = False,
    session_id: str | None = None,
    once_key: str | None = None,
) -> Captured:
    """Extract items from `text` and store the new ones in one transaction (none in a dry run).

    Also the entry point for other verbs that capture a transcript (session end). With `once_key`,
    a capture of that key is done once: the key is recorded with what it stores, and a capture
    whose key is recorded already stores nothing.
    """
    items = await asyncio.to_thread(extract, text)
    done = Captured()
    kept: list[Item] = []
    for item in items:
        if looks_secret(item.text):
            done.secrets += 1
        else:
            kept.append(item)
    if dry_run:
        known = await known_keys(store.db.reader, ctx.tenant)
        for item in kept:
            if store_key(item.text) in known:
                done.skipped += 1
            else:
                done.items.append(CapturedItem(item.category, item.text))
        return done
    stored: list[Memory] = []
    async with store.db.transaction() as conn:
        if once_key is not None and not await spool_marks.first(conn, once_key, clock.iso(clock.now())):
            done.skipped = len(kept)
            return done
        # Read inside the transaction, so a capture running alongside cannot store the same item too.
        known = await known_keys(conn, ctx.tenant)
        for item in kept:
            if store_key(item.text) in known:
                done.skipped += 1
                continue
            memory = fresh_memory(ctx, store, item.text, _tags(item), source="capture", confidence="observed")
            memory.source_session_id = session_id or memory.source_session_id
            if not await memories.insert(conn, memory):
                done.rejected += 1
                continue
            stored.append(memory)
            done.items.append(CapturedItem(item.category, item.text, memory.id))
        if stored:
            await memories.audit_many(
                conn,
                ts=clock.iso(clock.now()),
                tenant=ctx.tenant,
                actor=ctx.actor,
                op="capture",
                targets=[memory.id for memory in stored],
            )
    store.written(stored)
    return done
