"""Embedding memories in the background after their commit, and on request (recall.md §10.3, §10.6)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence

from hippod.embed.service import Embedder, EmbedService, Settings, embedding_text, text_digest
from hippod.errors import HippoError
from hippod.store import embeddings, sqlite_errors
from hippod.store.backend import StoreDatabase

log = logging.getLogger("hippod.embed")

BATCH = 256
PAGE = 2048
COALESCE_SECONDS = 0.2

Progress = Callable[[int, int], Awaitable[None]]
# Told (model, [(memory id, vector)]) of each batch of vectors, in the transaction that stores
# them: the store's nearest index (Store.vectors_written).
Written = Callable[[str, list[tuple[str, bytes]]], None]


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
    db: StoreDatabase,
    embedder: Embedder,
    todo: Sequence[tuple[str, str, str]],
    *,
    for_read: bool = False,
    written: Written | None = None,
) -> dict[str, bytes]:
    """Embed in a worker thread, then store the vectors in one transaction; memory id -> vector.

    `for_read`: the vectors are for a read that is waiting on them, so a full disk only costs
    their storing: they are returned all the same. `written` is told what is being stored.
    """
    blobs = await asyncio.to_thread(embedder.embed, [text for _, text, _ in todo])
    rows = [(memory_id, blob, digest) for (memory_id, _, digest), blob in zip(todo, blobs, strict=True)]
    try:
        async with db.transaction() as conn:
            await embeddings.upsert(conn, embedder.model, embedder.dim, rows)
            if written is not None:
                # Before the commit, so no reader sees a vector the index lacks. Should the commit
                # fail, the index holds vectors the table does not: it only proposes candidates,
                # and each is scored from its stored vector or embedded again.
                written(embedder.model, [(memory_id, blob) for memory_id, blob, _ in rows])
    except HippoError as exc:
        if not (for_read and exc.code == sqlite_errors.DISK_FULL):
            raise
        log.warning("vectors used but not stored: %s", exc.message)
    return {memory_id: blob for memory_id, blob, _ in rows}


async def embed_ids(
    db: StoreDatabase,
    embedder: Embedder,
    ids: Sequence[str],
    *,
    for_read: bool = False,
    written: Written | None = None,
) -> dict[str, bytes]:
    """Embed those of `ids` that lack a current vector; returns the vectors made, by memory id
    (`for_read`, `written`: see _embed)."""
    todo = _stale(
        await embeddings.texts(db.reader, ids), await embeddings.digests(db.reader, embedder.model, ids)
    )
    made: dict[str, bytes] = {}
    for start in range(0, len(todo), BATCH):
        made |= await _embed(db, embedder, todo[start : start + BATCH], for_read=for_read, written=written)
    return made


async def scan(
    db: StoreDatabase,
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
    while page := await embeddings.texts_page(db.reader, after, PAGE):
        after = page[-1][0]
        rows = [(memory_id, content, tags) for _, memory_id, content, tags in page]
        todo = _stale(rows, await embeddings.digests(db.reader, embedder.model, [r[0] for r in rows]))
        total += len(rows)
        current += len(rows) - len(todo)
        if not write:
            continue
        for start in range(0, len(todo), BATCH):
            chunk = todo[start : start + BATCH]
            await _embed(db, embedder, chunk, written=written)
            done += len(chunk)
            if progress is not None:
                await progress(done, total)
    return current, total


class EmbedQueue:
    """A store's memories written since the last pass, embedded shortly after their commit."""

    def __init__(
        self, db: StoreDatabase, settings: Callable[[], Settings], service: EmbedService, written: Written
    ) -> None:
        self._db = db
        self._written = written
        self._settings = settings
        self._service = service
        self._pending: dict[str, None] = {}
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def changed_ids(self, ids: Iterable[str]) -> None:
        """Queue memories just committed; a store with embeddings off drops them at the next pass."""
        if self._closed:
            return
        self._pending.update(dict.fromkeys(ids))
        if self._pending and (self._task is None or self._task.done()):
            # A fresh context: the pass is not part of the request that queued it.
            self._task = asyncio.get_running_loop().create_task(self._run(), context=contextvars.Context())

    async def _run(self) -> None:
        while self._pending:
            if not self._closed:
                await asyncio.sleep(COALESCE_SECONDS)
            ids = list(self._pending)
            self._pending.clear()
            try:
                embedder = await self._service.get(self._settings())
                if embedder is not None:
                    await embed_ids(self._db, embedder, ids, written=self._written)
            except HippoError as exc:
                # The store's config.json does not parse: its memories wait for the next pass.
                log.warning("background embedding skipped: %s", exc.message)
            except Exception as exc:
                if not sqlite_errors.is_corrupt(exc):
                    log.exception("background embedding failed for a store")
                else:  # the request that met it set the store aside and named it
                    log.warning("background embedding skipped: store %s is corrupt (%s)", self._db.path, exc)

    async def close(self) -> None:
        """Finish the pass under way (and what it has queued) before the database closes."""
        self._closed = True
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task
