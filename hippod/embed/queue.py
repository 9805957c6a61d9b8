"""Embedding memories in the background after their commit, and on request (recall.md §10.3, §10.6)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

from hippod.base import heap, priority, thread_stop
from hippod.base.errors import HippoError
from hippod.base.locks import LockPerObject
from hippod.embed.service import Embedder, EmbedService, Settings, embedding_text, text_digest
from hippod.store.sqlite import embeddings, sqlite_errors
from hippod.store.sqlite.db import Database

log = logging.getLogger("hippod.embed")

BATCH = 256
PAGE = 2048
COALESCE_SECONDS = 0.2
# The model runs on one thread of its own, below the daemon's priority: a background pass takes a
# whole core for minutes, and a recall or a hook's request must not queue behind it for the CPU.
_BACKGROUND = ThreadPoolExecutor(1, "hippod-embed", initializer=priority.lower_thread)

Progress = Callable[[int, int], Awaitable[None]]
# Told (model, [(memory id, vector)]) of each batch of vectors, in the transaction that stores
# them: the store's nearest index (Store.vectors_written).
Written = Callable[[str, list[tuple[str, bytes]]], None]

# One embedding at a time per store. The background queue and an `embed` request each choose their
# rows before they embed; without this, both could send the same rows to an API that bills per call.
_lock: LockPerObject[Database] = LockPerObject()


def _stale(rows: Iterable[tuple[str, str, list[str]]], have: dict[str, str]) -> list[tuple[str, str, str]]:
    """(id, text, digest) of the rows whose stored vector is missing or was made from other text."""
    out = []
    for memory_id, content, tags in rows:
        text = embedding_text(content, tags)
        digest = text_digest(text)
        if have.get(memory_id) != digest:
            out.append((memory_id, text, digest))
    return out


async def _embed(
    db: Database,
    embedder: Embedder,
    todo: Sequence[tuple[str, str, str]],
    *,
    written: Written | None = None,
) -> dict[str, bytes]:
    """Embed in a worker thread, then store the vectors in one transaction; memory id -> vector.

    `written` is told what is being stored. Rows another pass embedded while this one waited for
    the store's turn are skipped.
    """
    async with _lock(db):
        have = await embeddings.digests(db.reader, embedder.model, [memory_id for memory_id, _, _ in todo])
        todo = [row for row in todo if have.get(row[0]) != row[2]]
        if not todo:
            return {}
        # The model's batches check for a cancel: a stopping daemon does not wait for all of them.
        blobs = await thread_stop.run_in(_BACKGROUND, embedder.embed, [text for _, text, _ in todo])
        rows = [(memory_id, blob, digest) for (memory_id, _, digest), blob in zip(todo, blobs, strict=True)]
        async with db.transaction() as conn:
            await embeddings.upsert(conn, embedder.model, embedder.dim, rows)
            if written is not None:
                # Before the commit, so no reader sees a vector the index lacks. Should the commit
                # fail, the index holds vectors the table does not: it only proposes candidates,
                # and each is scored from its stored vector, or on its words until it has one.
                written(embedder.model, [(memory_id, blob) for memory_id, blob, _ in rows])
    return {memory_id: blob for memory_id, blob, _ in rows}


async def embed_ids(
    db: Database, embedder: Embedder, ids: Sequence[str], *, written: Written | None = None
) -> dict[str, bytes]:
    """Embed those of `ids` that lack a current vector; returns the vectors made, by memory id
    (`written`: see _embed)."""
    todo = _stale(
        await embeddings.texts(db.reader, ids), await embeddings.digests(db.reader, embedder.model, ids)
    )
    made: dict[str, bytes] = {}
    step = _step(embedder)
    for start in range(0, len(todo), step):
        made |= await _embed(db, embedder, todo[start : start + step], written=written)
    return made


def _step(embedder: Embedder) -> int:
    """Memories embedded and stored together: BATCH for the shipped model; for an API, the first
    whole number of its calls (`batch` texts each) from BATCH up, so only a run's last call goes
    out part-full."""
    per_call = int(getattr(embedder, "batch", BATCH))
    return per_call * -(-BATCH // per_call)


async def scan(
    db: Database,
    embedder: Embedder,
    *,
    write: bool,
    progress: Progress | None = None,
    written: Written | None = None,
) -> tuple[int, int]:
    """Walk the whole store; with `write`, embed what is missing or stale (`written`: see _embed).

    Returns (memories with a current vector before this call, all memories). Each batch commits on
    its own, so an interrupted run keeps what it finished and the next run picks up the rest.
    """
    current = total = 0
    done = 0
    after = 0
    step = _step(embedder)
    while page := await embeddings.texts_page(db.reader, after, PAGE):
        after = page[-1][0]
        rows = [(memory_id, content, tags) for _, memory_id, content, tags in page]
        todo = _stale(rows, await embeddings.digests(db.reader, embedder.model, [r[0] for r in rows]))
        total += len(rows)
        current += len(rows) - len(todo)
        if not write:
            continue
        for start in range(0, len(todo), step):
            chunk = todo[start : start + step]
            await _embed(db, embedder, chunk, written=written)
            done += len(chunk)
            if progress is not None:
                await progress(done, total)
    return current, total


class EmbedQueue:
    """A store's memories written since the last pass, embedded shortly after their commit.

    A stopping daemon does not wait for them: `stop` ends the pass under way at its next batch, and
    `close` notes in the store that memories were left without a vector; the next daemon to open the
    store embeds every memory that lacks a current one (`resume`), then clears the note.
    """

    def __init__(
        self, db: Database, settings: Callable[[], Settings], service: EmbedService, written: Written
    ) -> None:
        self._db = db
        self._written = written
        self._settings = settings
        self._service = service
        self._pending: dict[str, None] = {}
        self._resume = False
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        # Memories this queue was given and did not embed (the stop came first).
        self._left = False

    @property
    def busy(self) -> bool:
        """A pass is under way or due."""
        return bool(self._pending) or (self._task is not None and not self._task.done())

    def changed_ids(self, ids: Iterable[str]) -> None:
        """Queue memories to embed (just committed, or found by a recall without a vector); a store with
        embeddings off drops them at the next pass."""
        if self._closed:
            self._left = self._left or any(True for _ in ids)
            return
        self._pending.update(dict.fromkeys(ids))
        if self._pending:
            self._start()

    def resume(self) -> None:
        """Embed, in the background, what a daemon that stopped before it was done left unembedded."""
        if not self._closed:
            self._resume = True
            self._start()

    def _start(self) -> None:
        if self._task is None or self._task.done():
            # A fresh context: the pass is not part of the request that queued it.
            self._task = asyncio.get_running_loop().create_task(self._run(), context=contextvars.Context())

    async def _run(self) -> None:
        # Memories queued while the heap is trimmed find this task still running: loop for them.
        while self._pending or self._resume:
            if await self._embed_pending():
                # The model's batches free tens of megabytes that glibc would otherwise keep mapped.
                await asyncio.to_thread(heap.trim)

    async def _embed_pending(self) -> bool:
        """Embed what is queued until nothing is; whether anything was embedded."""
        embedded = False
        while self._pending or self._resume:
            await asyncio.sleep(COALESCE_SECONDS)
            ids = list(self._pending)
            self._pending.clear()
            resume, self._resume = self._resume, False
            try:
                if resume:
                    embedded = await self._catch_up() or embedded
                if ids:
                    embedder = await self._service.get(self._settings())
                    if embedder is not None:
                        made = await embed_ids(self._db, embedder, ids, written=self._written)
                        embedded = embedded or bool(made)
            except HippoError as exc:
                # The store's config.json does not parse: its memories wait for the next pass.
                log.warning("background embedding skipped: %s", exc.message)
            except Exception as exc:
                if not sqlite_errors.is_corrupt(exc):
                    log.exception("background embedding failed for a store")
                else:  # the request that met it set the store aside and named it
                    log.warning("background embedding skipped: store %s is corrupt (%s)", self._db.path, exc)
        return embedded

    async def _catch_up(self) -> bool:
        """Embed every memory without a current vector, when a stop left some, then clear the note;
        whether it embedded any."""
        settings = self._settings()
        if self._service.missing(settings) or not await embeddings.unfinished(self._db.reader):
            return False
        embedder = await self._service.get(settings)
        if embedder is None:
            return False
        log.info("embedding the memories of %s that the last stop left without a vector", self._db.path)
        before, total = await scan(self._db, embedder, write=True, written=self._written)
        async with self._db.transaction() as conn:
            await embeddings.set_unfinished(conn, False)
        log.info("embedded %d memories of %s (%d in all)", total - before, self._db.path, total)
        return total > before

    def left_some(self) -> None:
        """Memories of the store were left without a vector by a cancelled `embed` request: the
        next daemon to open the store embeds them, should this one stop first."""
        self._left = True

    def stop(self) -> None:
        """The daemon is stopping: end the pass under way at its next batch; queue nothing more."""
        if self._closed:
            return
        self._closed = True
        self._left = self._left or self.busy
        if self._task is not None:
            self._task.cancel()

    async def close(self) -> None:
        """Stop (see `stop`) before the database closes, noting in the store what was left."""
        self.stop()
        if self._task is not None:
            await asyncio.wait({self._task})
        if not self._left:
            return
        try:
            if self._service.missing(self._settings()):
                return
            async with self._db.transaction() as conn:
                await embeddings.set_unfinished(conn, True)
        except Exception as exc:  # a bad config.json, a full disk: the memories wait for `embed`
            log.warning("could not note the memories left to embed in %s: %s", self._db.path, exc)
