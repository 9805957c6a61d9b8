"""`import --<format> <path>`, `import --agents` and `export` (ingest.md §1, §2, §4).

An import reads and plans in worker threads (parsing, tokenizing, the de-duplication index and
the rows' index terms), so the event loop keeps serving other requests, then writes every new
memory in one short transaction: the whole file or nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import time
from collections.abc import AsyncIterator
from typing import Any

from hippoctl.protocol import messages as m
from hippoctl.protocol.framing import MAX_FRAME
from hippoctl.protocol.replies_imports import ExportReply, ImportEntry, ImportReply
from hippoctl.protocol.wording import plural
from hippod import __version__, clock
from hippod.errors import HippoError
from hippod.handlers.memory import fresh_memory, new_id
from hippod.ingest import chunking, export_doc, files, sources
from hippod.ingest.chunking import Chunk, FormatError
from hippod.ingest.export_doc import ParsedExport, Record
from hippod.ingest.import_core import overlapping, prepare, preview
from hippod.ingest.planner import FORMAT_TAGS, Plan, plan_chunks, plan_records
from hippod.request import RequestContext
from hippod.store import imports as sql
from hippod.store import memories
from hippod.store.records import Memory
from hippod.store.stores import Store

log = logging.getLogger("hippod.imports")

HEARTBEAT_SECONDS = 5.0
# Long enough for a big import to say where it is, short enough to keep small ones quiet.
PROGRESS_FROM = 5_000
# What one reply may list: each entry costs ~150 bytes in the data and again in the text.
MAX_ENTRIES = 20_000
MAX_WARNINGS = 1_000
# Room left in a frame for the rest of the Result around an exported document.
FRAME_SLACK = 64 * 1024


@contextlib.asynccontextmanager
async def _heartbeat(ctx: RequestContext) -> AsyncIterator[None]:
    """Empty progress frames every few seconds, so a long job never leaves the client in silence."""

    async def beat() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            await ctx.say("", "err")

    task = asyncio.get_running_loop().create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _read(fmt: str, path: str) -> list[Chunk] | ParsedExport:
    """Read and split the input (blocking: runs in a worker thread)."""
    try:
        if fmt == "json":
            return export_doc.parse_export(files.read_bytes(path))
        if fmt == "cursor":
            return chunking.parse_cursor(sources.read_cursor(path))
        text = files.read_text(path)
        name = os.path.basename(path)
        if fmt == "chatgpt":
            return chunking.parse_chatgpt(text)
        if fmt == "claude":
            return chunking.parse_claude(text, name)
        if fmt == "markdown":
            return chunking.parse_markdown(text)
        return chunking.parse_file(text, name)
    except FormatError as exc:
        what = "JSON export" if fmt == "json" else f"--{fmt} file"
        raise HippoError("bad_input", f"cannot import {path}: not a valid {what}: {exc}") from None


async def import_(ctx: RequestContext, body: m.Import) -> tuple[Any, str]:
    # `import --agents` is routed to handlers/agents.py by the dispatcher.
    if body.format not in m.IMPORT_FORMATS or not body.path:
        raise HippoError("usage", f"import --{body.format} needs a file path")
    path, fmt = body.path, body.format
    extra_tags = [t.strip() for t in body.tags if t.strip()]
    store = await ctx.target_store(write=not body.dry_run)
    started = time.monotonic()
    async with _heartbeat(ctx):
        parsed = await asyncio.to_thread(_read, fmt, path)
        top, existing = await sql.live_texts(store.db.reader, ctx.tenant)
        rejected = await sql.rejected_digests(store.db.reader, ctx.tenant)
        count = len(parsed.records) if isinstance(parsed, ParsedExport) else len(parsed)
        if count >= PROGRESS_FROM:
            await ctx.say(f"read {count} chunks from {path}; checking {len(existing)} memories", "err")
        read = time.monotonic()
        plan = await asyncio.to_thread(
            _plan, ctx, store, fmt, parsed, extra_tags, existing, rejected, not body.dry_run
        )
        planned = time.monotonic()
        if not body.dry_run and plan.memories:
            if len(plan.memories) >= PROGRESS_FROM:
                await ctx.say(f"writing {len(plan.memories)} memories", "err")
            await _write(ctx, store, plan, top, fmt)
    log.info(
        "import of %d chunks into %s: read %.2fs, plan %.2fs, write %.2fs",
        plan.total,
        store.root,
        read - started,
        planned - read,
        time.monotonic() - planned,
    )
    if not body.dry_run and plan.memories:
        store.written(plan.memories)
    return _reply(ctx, store, plan, body.dry_run)


def _plan(
    ctx: RequestContext,
    store: Store,
    fmt: str,
    parsed: list[Chunk] | ParsedExport,
    extra_tags: list[str],
    existing: list[str],
    rejected: set[str],
    rows: bool,
) -> Plan:
    """The import's plan (blocking, CPU-bound: runs in a worker thread)."""
    if isinstance(parsed, ParsedExport):
        now = clock.now()
        default = float(store.config.get("defaultHalfLifeDays", 365))

        def from_record(record: Record) -> Memory:
            return export_doc.record_memory(
                record,
                memory_id=new_id(),
                tenant=ctx.tenant,
                now=now,
                default_half_life=default,
                project=store.project,
                original=not parsed.hippod,
                loss_aversion=ctx.state.loss_aversion,
            )

        return plan_records(parsed, extra_tags, existing, rejected, from_record, rows=rows)
    prepared = prepare(parsed, FORMAT_TAGS[fmt], extra_tags)

    def make(text: str, tags: list[str]) -> Memory:
        return fresh_memory(ctx, store, text, tags, source=f"import:{fmt}", confidence="observed")

    return plan_chunks(prepared, existing, rejected, make, rows=rows)


async def _write(ctx: RequestContext, store: Store, plan: Plan, top: int, fmt: str) -> None:
    """Store the plan in one transaction, after a last look at what changed since it was made:
    memories other requests stored meanwhile (near-copies are skipped) and new tombstones."""
    now = clock.iso(clock.now())
    async with store.db.long_transaction() as conn:
        _, since = await sql.live_texts(conn, ctx.tenant, top)
        if since:
            texts = [memory.content for memory in plan.memories]
            plan.drop(await asyncio.to_thread(overlapping, texts, since), as_rejected=False)
        tombstones = await sql.rejected_digests(conn, ctx.tenant)
        plan.drop({i for i, d in enumerate(plan.digests) if d in tombstones}, as_rejected=True)
        await sql.insert_rows(conn, plan.rows)
        await memories.audit_many(
            conn,
            ts=now,
            tenant=ctx.tenant,
            actor=ctx.actor,
            op="import",
            targets=[memory.id for memory in plan.memories],
            metadata={"format": fmt},
        )


def _reply(ctx: RequestContext, store: Store, plan: Plan, dry_run: bool) -> tuple[ImportReply, str]:
    shown = plan.memories[:MAX_ENTRIES]
    entries = [
        ImportEntry(id=None if dry_run else mem.id, preview=preview(mem.content), tags=mem.tags)
        for mem in shown
    ]
    for n in plan.truncated[:MAX_WARNINGS]:
        ctx.warnings.append(f"truncated chunk {n} to 1000 chars")
    if len(plan.truncated) > MAX_WARNINGS:
        ctx.warnings.append(f"... and {len(plan.truncated) - MAX_WARNINGS} more chunks truncated")
    imported = len(plan.memories)
    reply = ImportReply(
        total=plan.total,
        imported=0 if dry_run else imported,
        skipped=plan.skipped,
        rejected=plan.rejected,
        truncated=len(plan.truncated),
        entries=entries,
        dry_run=dry_run,
        store=store.root,
        entries_omitted=imported - len(shown),
    )
    counts = f"({plural(plan.skipped, 'duplicate')} skipped, {plan.rejected} rejected)"
    if not dry_run:
        return reply, f"Imported {imported} of {plan.total} {counts}"
    lines = [f"- {e.preview} [{', '.join(e.tags)}]" for e in entries]
    if reply.entries_omitted:
        lines.append(f"... and {reply.entries_omitted} more")
    lines.append(f"Would import {imported} of {plan.total} {counts}; nothing was written")
    return reply, "\n".join(lines)


# --- export -------------------------------------------------------------------------------------------


def _write_file(path: str, text: str) -> None:
    """Replace path with text atomically: a temporary file beside it, flushed, then renamed.

    The temporary name is unique per call: two exports to one path at once each rename a whole
    document into place, never one file both wrote into.
    """
    temp = ""
    try:
        fd, temp = tempfile.mkstemp(
            prefix=f"{os.path.basename(path)}.", suffix=".tmp", dir=os.path.dirname(path)
        )
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError as exc:
        if temp:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        problem = "it is a directory" if os.path.isdir(path) else (exc.strerror or str(exc))
        raise HippoError("file_unwritable", f"cannot write {path}: {problem}") from None


def _render(fmt: str, rows: list[Memory], ctx: RequestContext, store: Store) -> str:
    now = clock.now()
    if fmt == "json":
        return export_doc.render_json(rows, version=__version__, store=store.root, now=now)
    strengths = [memory.strength_at(now, ctx.state.loss_aversion).strength for memory in rows]
    return export_doc.render_markdown(rows, strengths)


async def export(ctx: RequestContext, body: m.Export) -> tuple[ExportReply, str]:
    if body.format not in ("json", "markdown"):
        raise HippoError("usage", f"unknown export format {body.format!r}; use json or markdown")
    store = await ctx.target_store(write=False)
    rows = await sql.exported(store.db.reader, ctx.tenant)
    document = await asyncio.to_thread(_render, body.format, rows, ctx, store)
    reply = ExportReply(format=body.format, count=len(rows), store=store.root, path=body.path)
    if body.path is None:
        if len(document.encode()) > MAX_FRAME - FRAME_SLACK:
            raise HippoError(
                "export_too_large",
                f"the export of {plural(len(rows), 'memory')} is too large for stdout through one reply",
                hint=f"hippoctl export <file> --format {body.format}",
            )
        return reply, document.rstrip("\n")
    await asyncio.to_thread(_write_file, body.path, document if document.endswith("\n") else document + "\n")
    return reply, f"Exported {plural(len(rows), 'memory')} to {body.path}"
