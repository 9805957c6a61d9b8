"""The mirror writer's passes: a file is rewritten only when its text changes (usage numbers are not
in it), deleted memories stay deleted, a closing pass keeps to its time, healing renders off the loop."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from hippod.mirrors import mirrors
from hippod.mirrors.mirror_text import render
from hippod.mirrors.mirrors import MirrorWriter
from hippod.model.memory import Memory
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories


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


async def test_usage_numbers_alone_leave_the_mirror_file_untouched(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    writer, rows, root = await _writer(database, make_memory, tmp_path)
    writer.changed_ids([r.id for r in rows])
    await writer.flush_now()
    path = _mirror(root, rows[0])
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    for usage in ("strength:", "retrieval_count:", "last_retrieved:", "half_life_days:", "outcome_"):
        assert f"\n{usage}" not in text
    # A recall's strengthening and an outcome: every usage number moves, nothing the mirror holds.
    async with database.transaction() as conn:
        await memories.strengthen(conn, [rows[0].id], "2026-12-02T00:00:00.000Z", 2.0)
        marked = replace(rows[0], outcome_positive=3, outcome_negative=1, strength=0.5)
        await memories.update_outcome(conn, [marked])
    writer.changed_ids([rows[0].id])
    await writer.flush_now()
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    # A change to the memory itself is written.
    async with database.transaction() as conn:
        await conn.execute("UPDATE memories SET pinned = 1 WHERE id = ?", (rows[0].id,))
    writer.changed_ids([rows[0].id])
    await writer.close()
    assert "\npinned: true\n" in path.read_text(encoding="utf-8")


async def test_a_deleted_memory_is_not_written_back(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    writer, rows, root = await _writer(database, make_memory, tmp_path)
    writer.changed_ids([rows[0].id, rows[1].id])
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
