"""The memory follows its note (ingest.md §4 "Lifecycle"): one tool's scan applied to one store.

New note → memory; unchanged → only last_seen_at; changed → a new memory replaces the old one
(deleted); gone while its location was read whole → the memory goes dormant (`note_deleted`).
Skip and transform rules, in order: under 10 chars, secret, rejected digest, first-200-chars
overlap > 0.6 (recorded as a duplicate link with no memory), emails masked, 1,500-char cut.
Each scan is one transaction; a dry run makes the same changes and rolls them back.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

import aiosqlite

from hippoctl.protocol import messages as m
from hippod.agentnotes import parse
from hippod.agentnotes.sources import Note, Scan
from hippod.base import clock
from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import RequestContext
from hippod.lifecycle.new_memory import fresh_memory
from hippod.mirrors.mirror_text import render
from hippod.mirrors.mirrors import dormant_file
from hippod.model.digest import digests
from hippod.model.memory import Memory
from hippod.model.secrets import looks_secret
from hippod.store.sqlite import agent_links, memories, rejections
from hippod.store.sqlite import dormant as dormant_store
from hippod.store.sqlite.agent_links import Link
from hippod.store.sqlite.overlap import find_overlapping
from hippod.store.stores import SqliteStore

OVERLAP = 0.6
OVERLAP_CHARS = 200
DORMANT_REASON = "note_deleted"


@dataclass
class Outcome:
    """What one scan did (or, in a dry run, would do) to one store."""

    added: int = 0
    replaced: int = 0
    dormant: int = 0
    unchanged: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    new_ids: list[str] = field(default_factory=list)


class _Rollback(Exception):
    """Ends a dry run's transaction without committing it."""


@dataclass
class _Work:
    """A scan's changes, gathered inside its transaction and applied to mirrors after the commit."""

    outcome: Outcome = field(default_factory=Outcome)
    written: list[Memory] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    dormant: list[Memory] = field(default_factory=list)


def _context(state: DaemonView, store: SqliteStore, tenant: str) -> RequestContext:
    """A daemon-internal request, so memories are built as every write verb builds them."""
    cwd = store.root if store.kind == "global" else os.path.dirname(store.root)
    request = m.Request(id=0, cwd=cwd, body=m.Import(format="agents"), tenant=tenant)
    return RequestContext(request=request, state=state)


async def apply_scan(
    state: DaemonView,
    store: SqliteStore,
    scan: Scan,
    *,
    tenant: str = "default",
    actor: str = "daemon",
    origin_project: str | None = None,
    dry_run: bool = False,
) -> Outcome:
    """Bring one store's links and memories for one tool in line with what the scan found."""
    work = _Work()
    if scan.no_front_matter:
        work.outcome.skipped["no_front_matter"] += scan.no_front_matter
    if not scan.notes and not await agent_links.of_tool(store.db.reader, scan.tool):
        # Nothing to add and nothing to retire: leave the store untouched (no write transaction).
        return work.outcome
    ctx = _context(state, store, tenant)
    project = store.project if origin_project is None else origin_project
    try:
        async with store.db.transaction() as conn:
            await _apply(conn, ctx, store, scan, work, project, actor)
            if dry_run:
                raise _Rollback
    except _Rollback:
        return work.outcome
    if work.deleted:
        store.mirrors.deleted(work.deleted)
    if work.written:
        store.written(work.written)
    if work.dormant:
        store.mirrors.files({dormant_file(memory.id): render(memory) for memory in work.dormant})
    return work.outcome


async def _apply(
    conn: aiosqlite.Connection,
    ctx: RequestContext,
    store: SqliteStore,
    scan: Scan,
    work: _Work,
    project: str,
    actor: str,
) -> None:
    now = clock.iso(clock.now())
    links = await agent_links.of_tool(conn, scan.tool)
    unchanged: list[str] = []
    present: set[str] = set()
    for note in scan.notes:
        present.add(note.key)
        digest, legacy = digests(note.text)
        link = links.get(note.key)
        # A link recorded before the current normalisation holds the legacy digest of the same text.
        if link is not None and link.content_digest in (digest, legacy):
            unchanged.append(note.key)
            work.outcome.unchanged += 1
            continue
        await _take(conn, ctx, store, note, digest, link, work, project, actor, now)
    await agent_links.seen(conn, scan.tool, unchanged, now)
    for key, link in links.items():
        if key in present or not any(loc.holds(link.note_path) for loc in scan.complete):
            continue
        await _gone(conn, ctx, link, work, actor, now)


async def _take(
    conn: aiosqlite.Connection,
    ctx: RequestContext,
    store: SqliteStore,
    note: Note,
    digest: str,
    link: Link | None,
    work: _Work,
    project: str,
    actor: str,
    now: str,
) -> None:
    """A new or changed note: skip it, record it as a duplicate, or store it (replacing the old one)."""
    tenant = ctx.tenant
    reason = None
    if len(note.text) < parse.MIN_CHARS:
        reason = "short"
    elif looks_secret(note.text):
        reason = "secret"
    elif await rejections.refuses(conn, tenant, note.text):
        reason = "rejected"
    old_id = link.memory_id if link is not None and not link.suppressed else None
    if old_id is not None and await memories.delete(conn, tenant, old_id):
        work.deleted.append(old_id)
    else:
        old_id = None
    memory: Memory | None = None
    if reason is None and await find_overlapping(
        conn, tenant, note.text, OVERLAP, chars=OVERLAP_CHARS, fts5=store.fts5
    ):
        reason = "duplicate"
    if reason is None:
        content = parse.cut(parse.mask_emails(note.text))
        tags = ["agent-memory", f"agent:{note.tool}"]
        memory = fresh_memory(
            ctx, store, content, tags, source=note.source, confidence="observed", origin_project=project
        )
        if not await memories.insert(conn, memory):
            reason, memory = "rejected", None
    if reason is not None:
        work.outcome.skipped[reason] += 1
    if memory is None and reason != "duplicate":
        # Skipped: nothing links the note; it is looked at again when it next changes or is rescanned.
        if link is not None:
            await agent_links.drop(conn, note.tool, note.key)
    else:
        new_id = None if memory is None else memory.id
        await agent_links.put(
            conn, Link(note.tool, note.key, note.path, digest, new_id, project, now, suppressed=False)
        )
    if memory is not None:
        work.written.append(memory)
        work.outcome.new_ids.append(memory.id)
    if link is not None and (memory is not None or old_id is not None):
        work.outcome.replaced += memory is not None
        op, target = "agent_note_replace", (memory.id if memory else None)
    elif memory is not None:
        work.outcome.added += 1
        op, target = "agent_note_import", memory.id
    else:
        return
    metadata = {"tool": note.tool, "source": note.source, "old": old_id}
    await memories.audit(conn, ts=now, tenant=tenant, actor=actor, op=op, target=target, metadata=metadata)


async def _gone(
    conn: aiosqlite.Connection, ctx: RequestContext, link: Link, work: _Work, actor: str, now: str
) -> None:
    """A note deleted while its location was readable: its memory goes dormant; the link goes."""
    await agent_links.drop(conn, link.tool, link.note_key)
    if link.memory_id is None or link.suppressed:
        return
    memory = await memories.get(conn, ctx.tenant, link.memory_id)
    if memory is None or not await dormant_store.move_in(conn, [memory.id], DORMANT_REASON, now):
        return
    work.dormant.append(memory)
    work.deleted.append(memory.id)
    work.outcome.dormant += 1
    await memories.audit(
        conn,
        ts=now,
        tenant=ctx.tenant,
        actor=actor,
        op="agent_note_dormant",
        target=memory.id,
        metadata={"tool": link.tool, "reason": DORMANT_REASON},
    )
