"""A recall's bookkeeping reaches the mirrors later than other changes: at most BOOKKEEPING_SECONDS
after, with the next other change, or at shutdown; never lost."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from hippod.store import db as dbmod
from hippod.store import memories, mirrors
from hippod.store.mirror_text import render
from hippod.store.mirrors import MirrorWriter
from hippod.store.records import Memory


async def _writer(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> tuple[MirrorWriter, list[Memory], Path]:
    rows = [make_memory(f"memory {i} about the deploy") for i in range(3)]
    async with database.transaction() as conn:
        for memory in rows:
            assert await memories.insert(conn, memory)

    async def load(ids: list[str]) -> list[Memory]:
        return await memories.get_many(database.reader, ids)

    async def stats() -> dict[str, object]:
        return {"memories": len(rows)}

    root = tmp_path / "mirrors"
    root.mkdir()
    return MirrorWriter(str(root), load, stats, lambda: database.reader), rows, root


def _mirror(root: Path, memory: Memory) -> Path:
    return root / memory.layer / f"{memory.id}.md"


async def _wait_for(path: Path, timeout: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if path.exists():
            return True
        await asyncio.sleep(0.02)
    return path.exists()


async def test_bookkeeping_alone_waits_then_shutdown_writes_it(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    writer, rows, root = await _writer(database, make_memory, tmp_path)
    writer.touched([rows[0].id])
    # Well past the 1 s coalescing window of other changes, and nothing is written yet.
    assert not await _wait_for(_mirror(root, rows[0]), mirrors.COALESCE_SECONDS + 1.0)
    await writer.close()
    assert _mirror(root, rows[0]).read_text(encoding="utf-8") == render(rows[0])


async def test_another_change_takes_the_bookkeeping_along(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    writer, rows, root = await _writer(database, make_memory, tmp_path)
    writer.touched([rows[0].id])
    writer.changed_ids([rows[1].id])
    # The real change comes out within its coalescing window, and the touched mirror with it.
    assert await _wait_for(_mirror(root, rows[1]), 30.0)
    assert _mirror(root, rows[0]).read_text(encoding="utf-8") == render(rows[0])
    assert not _mirror(root, rows[2]).exists()
    await writer.close()


async def test_bookkeeping_is_written_after_its_own_window(
    database: dbmod.Database,
    make_memory: Callable[..., Memory],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mirrors, "BOOKKEEPING_SECONDS", 0.5)
    writer, rows, root = await _writer(database, make_memory, tmp_path)
    writer.touched([rows[2].id])
    assert await _wait_for(_mirror(root, rows[2]), 30.0)
    await writer.close()


async def test_a_deleted_memory_is_not_written_back(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    writer, rows, root = await _writer(database, make_memory, tmp_path)
    writer.touched([rows[0].id, rows[1].id])
    writer.deleted([rows[0].id])
    await writer.close()
    assert not _mirror(root, rows[0]).exists()
    assert _mirror(root, rows[1]).exists()


async def test_a_close_out_of_time_leaves_the_rest_for_the_next_heal(
    database: dbmod.Database,
    make_memory: Callable[..., Memory],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    writer, _, root = await _writer(database, make_memory, tmp_path)
    monkeypatch.setattr(mirrors.mirror_heal, "BATCH", 2)
    monkeypatch.setattr(mirrors, "CLOSE_SECONDS", 0.0)
    many = [make_memory(f"imported note {i} on the release train") for i in range(7)]
    async with database.transaction() as conn:
        for memory in many:
            assert await memories.insert(conn, memory)
    writer.changed(many[:5])
    writer.changed_ids([m.id for m in many[5:]])
    await writer.close()
    # The first batch is written however late it is; the others wait for the next open's heal.
    written = [m for m in many if _mirror(root, m).exists()]
    assert written == many[:2]
    healed = await mirrors.mirror_heal.reconcile(database.reader, str(root), render)
    assert healed.written >= 5
    assert all(_mirror(root, m).read_text(encoding="utf-8") == render(m) for m in many)


async def test_healing_renders_off_the_event_loop(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    _, rows, root = await _writer(database, make_memory, tmp_path)
    threads: list[int] = []

    def spy(memory: Memory) -> str:
        threads.append(threading.get_ident())
        return render(memory)

    healed = await mirrors.mirror_heal.reconcile(database.reader, str(root), spy)
    assert healed.written == len(rows) == len(threads)
    assert threading.get_ident() not in threads
    assert all(_mirror(root, m).read_text(encoding="utf-8") == render(m) for m in rows)
