"""`import --<format> <path>`, `import --agents` and `export` (ingest.md §1, §2, §4).

An import reads in a worker thread and plans in another (parsing, tokenizing, the de-duplication
index and the rows' index terms), or in a process of its own for a large file
(ingest/plan_process.py), so the event loop keeps serving other requests. The plan comes a part at a
time, and one transaction stores the parts as they come (ingest/import_write.py): the whole file or
nothing. The file's digest is recorded with it, per store, tenant, format and path: importing the
unchanged file again answers at once, and a changed file is read whole again, its unchanged parts
skipped as near-copies of what it stored.
A large import reports its steps as it goes (hippod/calls/progress.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from hippoctl.protocol import messages as m
from hippoctl.protocol.files import replace
from hippoctl.protocol.framing import MAX_FRAME
from hippoctl.protocol.replies_imports import ExportReply, ImportEntry, ImportReply
from hippoctl.protocol.wording import DRY_RUN, plural
from hippod import __version__
from hippod.base import clock, heap
from hippod.base.errors import HippoError
from hippod.calls.progress import Steps, reporting
from hippod.calls.request import RequestContext
from hippod.ingest import export_doc, import_write, plan_process, readers
from hippod.ingest.chatgpt import FormatMismatch
from hippod.ingest.chunking import FormatError
from hippod.ingest.export_doc import ParsedExport, Record
from hippod.ingest.import_core import DUPLICATE_ABOVE, Prepared, prepare, preview
from hippod.ingest.import_write import Handoff, Seen
from hippod.ingest.planner import FORMAT_TAGS, ChunkMemory, Plan, plan_records
from hippod.ingest.readers import Reading, Source
from hippod.lifecycle.new_memory import Origin, given_tags, new_id
from hippod.model.memory import Memory
from hippod.store.sqlite import imports as sql
from hippod.store.sqlite import near_index
from hippod.store.sqlite.import_probe import StoredProbe
from hippod.store.sqlite.imports import ImportedFile
from hippod.store.stores import SqliteStore, Store, sqlite_only

log = logging.getLogger("hippod.imports")

# A step of this many chunks or memories is long enough to show a progress bar for.
PROGRESS_FROM = 5_000
# What one reply may list: each entry costs ~150 bytes in the data and again in the text.
MAX_ENTRIES = 20_000
MAX_WARNINGS = 1_000
# Room left in a frame for the rest of the Result around an exported document.
FRAME_SLACK = 64 * 1024


def _refusal(path: str, fmt: str, exc: FormatError) -> HippoError:
    if isinstance(exc, FormatMismatch):
        hint = f"hippoctl import --{exc.flag} {shlex.quote(path)}"
        return HippoError("bad_input", f"cannot import {path}: {exc}", hint=hint)
    what = "JSON export" if fmt == "json" else f"--{fmt} file"
    return HippoError("bad_input", f"cannot import {path}: not a valid {what}: {exc}")


def _read(source: Source, steps: Steps) -> Reading:
    """Parse the file by its format (blocking: runs in a worker thread)."""
    try:
        return readers.read(source, steps)
    except FormatError as exc:
        raise _refusal(source.path, source.fmt, exc) from None


async def import_(ctx: RequestContext, body: m.Import) -> tuple[Any, str]:
    # `import --agents` is routed to handlers/agents.py by the dispatcher.
    if body.format not in m.IMPORT_FORMATS or not body.path:
        raise HippoError("usage", f"import --{body.format} needs a file path")
    path, fmt = body.path, body.format
    extra_tags = given_tags(body.tags)
    store = sqlite_only(await ctx.target_store(write=not body.dry_run), ctx.verb)
    started = time.monotonic()
    source = await asyncio.to_thread(readers.load, fmt, path)
    if not body.force:
        seen = await sql.imported_file(store.db.reader, ctx.tenant, fmt, path)
        if seen is not None and seen.digest == source.digest:
            return _unchanged(store, path, seen, body.dry_run)
    steps = Steps(least=PROGRESS_FROM)
    async with reporting(ctx, steps):
        reading = await asyncio.to_thread(_read, source, steps)
        ctx.warnings.extend(reading.warnings)
        chunks = await asyncio.to_thread(_chunks, source, reading, extra_tags)
        read = time.monotonic()
        if not body.dry_run:
            # The memories written since the last catch-up get their near-copy keys, so the plan
            # finds its candidates in the index (a dry run hashes the few waiting in memory).
            await near_index.before_import(store.db)
        handoff = Handoff(asyncio.get_running_loop(), _judged(reading, chunks))
        planner = _planner(
            ctx, store, source.fmt, reading, chunks, extra_tags, not body.dry_run, steps, handoff
        )
        planner.add_done_callback(lambda done: _planner_ended(done, handoff))
        try:
            if body.dry_run:
                plan = await import_write.collect(handoff)
            else:
                plan = await import_write.store_parts(
                    ctx, store, handoff, source.fmt, source.path, source.digest, steps
                )
            await planner
        finally:
            if not planner.done():
                # A planning thread ends at its next tick; a planning process is killed, and waited
                # for before the request ends.
                steps.stop()
                planner.cancel()
                await asyncio.wait({planner}, timeout=plan_process.EXIT_WAIT)
        planned = handoff.finished
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
        # The import's memories get their near-copy keys in the background, not at the next import.
        store.near_indexer.start()
    if plan.total >= PROGRESS_FROM:
        # A large import's planning caches (posting lists, stored rows' stems) are freed by now:
        # their pages go back to the system instead of staying with the idle daemon.
        await asyncio.to_thread(heap.give_back)
    return _reply(ctx, store, plan, body.dry_run, reading.conversations)


def _chunks(source: Source, reading: Reading, extra_tags: list[str]) -> Prepared | None:
    """The chunks an import of `reading` judges (None for a JSON export, judged by its records)."""
    if isinstance(reading.content, ParsedExport):
        return None
    prepared = prepare(reading.content, FORMAT_TAGS[source.fmt], extra_tags)
    if not prepared.texts and reading.empty is not None:
        raise HippoError("bad_input", f"cannot import {source.path}: {reading.empty}")
    return prepared


def _planner_ended(planner: asyncio.Future[None], handoff: Handoff) -> None:
    """A planner's end, seen from the loop: one that ended without closing the handoff (cancelled
    before or while it ran, or never started) closes it now, so the write waiting on it ends too.
    Its error, if any, is the write's to raise, through the handoff."""
    error = asyncio.CancelledError() if planner.cancelled() else planner.exception()
    handoff.close(error)


def _judged(reading: Reading, chunks: Prepared | None) -> int:
    """How many chunks, or records of a JSON export, the plan judges."""
    if chunks is not None:
        return len(chunks.texts)
    assert isinstance(reading.content, ParsedExport)
    return len(reading.content.records)


def _planner(
    ctx: RequestContext,
    store: SqliteStore,
    fmt: str,
    reading: Reading,
    chunks: Prepared | None,
    extra_tags: list[str],
    rows: bool,
    steps: Steps,
    handoff: Handoff,
) -> asyncio.Future[None]:
    """Start planning the import, its parts going to `handoff`: in a process of its own for many
    chunks (plan_process.py), else in a worker thread, reading the store through a connection of
    its own."""
    if chunks is None:
        items = _export_parts(ctx, store, reading, extra_tags, rows, steps)
    else:
        # The store's default half-life is read once, not once a memory: each read stats config.json.
        default = float(store.config.get("defaultHalfLifeDays", 365))
        make = ChunkMemory(Origin(ctx.tenant, ctx.request.session, store.project), fmt, default)
        job = plan_process.Job(store.db.path, ctx.tenant, store.fts5, chunks, make, rows)
        if len(chunks.texts) >= plan_process.PROCESS_FROM:
            return asyncio.ensure_future(plan_process.plan_in_child(job, handoff, steps))
        items = plan_process.plan_parts(job, steps)
    return asyncio.ensure_future(asyncio.to_thread(handoff.hand_over, items))


def _export_parts(
    ctx: RequestContext, store: SqliteStore, reading: Reading, extra_tags: list[str], rows: bool, steps: Steps
) -> Iterator[Seen | Plan]:
    """A JSON export's plan, after what it was checked against, in one part: a record's verdict can
    follow a later record's (its supersede chain)."""
    parsed = reading.content
    assert isinstance(parsed, ParsedExport)
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

    with StoredProbe(store.db.path, ctx.tenant, DUPLICATE_ABOVE, fts5=store.fts5) as probe:
        rejected = probe.rejected_digests()
        yield probe.top, rejected
        yield plan_records(
            parsed, extra_tags, probe.duplicates, rejected, from_record, rows=rows, steps=steps
        )


def _unchanged(store: SqliteStore, path: str, seen: ImportedFile, dry_run: bool) -> tuple[ImportReply, str]:
    """The reply to importing a file that is byte for byte what its last import read."""
    reply = ImportReply(
        total=0,
        imported=0,
        skipped=0,
        rejected=0,
        truncated=0,
        entries=[],
        dry_run=dry_run,
        store=store.root,
        unchanged=True,
        imported_at=seen.imported_at,
    )
    when = seen.imported_at.replace("T", " ")[:16] + " UTC"
    verb = f"{DRY_RUN}\nWould import" if dry_run else "Imported"
    return reply, (
        f"{verb} nothing: {path} is unchanged since its import on {when} "
        f"({plural(seen.chunks, 'chunk')} then; --force reads it again)"
    )


def _reply(
    ctx: RequestContext, store: SqliteStore, plan: Plan, dry_run: bool, conversations: int | None
) -> tuple[ImportReply, str]:
    shown = plan.memories[:MAX_ENTRIES]
    entries = [
        ImportEntry(id=None if dry_run else mem.id, preview=preview(mem.content), tags=mem.tags)
        for mem in shown
    ]
    for n in plan.truncated[:MAX_WARNINGS]:
        ctx.warnings.append(f"truncated chunk {n} to 1000 chars")
    if len(plan.truncated) > MAX_WARNINGS:
        ctx.warnings.append(f"... and {plural(len(plan.truncated) - MAX_WARNINGS, 'more chunk')} truncated")
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
        conversations=conversations,
    )
    counts = f"({plural(plan.skipped, 'duplicate')} skipped, {plan.rejected} rejected)"
    if not dry_run:
        return reply, f"Imported {imported} of {plan.total} {counts}"
    lines = [DRY_RUN, *(f"- {e.preview} [{', '.join(e.tags)}]" for e in entries)]
    if reply.entries_omitted:
        lines.append(f"... and {reply.entries_omitted} more")
    lines.append(f"Would import {imported} of {plan.total} {counts}")
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
        replace(temp, path)
    except OSError as exc:
        if temp:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        problem = "it is a directory" if os.path.isdir(path) else (exc.strerror or str(exc))
        raise HippoError("file_unwritable", f"cannot write {path}: {problem}") from None


def _render(fmt: str, rows: list[Memory], ctx: RequestContext, store: Store) -> str:
    now = clock.now()
    strengths = [memory.strength_at(now, ctx.state.loss_aversion).strength for memory in rows]
    if fmt == "json":
        # A record's strength is its live value, as every read gives it: the stored column is a
        # cache that a sleep writes only once it lags (decay.CACHE_DRIFT).
        for memory, strength in zip(rows, strengths, strict=True):
            memory.strength = round(strength, 4)
        return export_doc.render_json(rows, version=__version__, store=store.root, now=now)
    return export_doc.render_markdown(rows, strengths)


async def export(ctx: RequestContext, body: m.Export) -> tuple[ExportReply, str]:
    if body.format not in ("json", "markdown"):
        raise HippoError("usage", f"unknown export format {body.format!r}; use json or markdown")
    store = await ctx.target_store(write=False)
    rows = await store.reports.exported(store.db.reader, ctx.tenant)
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
