"""A mirror pass over thousands of changed memories reads them back a batch at a time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hippod.mirrors import mirror_heal
from hippod.mirrors.mirror_text import render
from hippod.mirrors.mirrors import MirrorWriter
from hippod.model.memory import Memory
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories


async def test_every_changed_mirror_is_written_from_batches(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    rows = [make_memory(f"memory number {i} about the build") for i in range(2 * mirror_heal.BATCH + 300)]
    async with database.transaction() as conn:
        for memory in rows:
            assert await memories.insert(conn, memory)
    asked: list[int] = []

    async def load(ids: list[str]) -> list[Memory]:
        asked.append(len(ids))
        return await memories.get_many(database.reader, ids)

    async def stats() -> dict[str, object]:
        return {"memories": len(rows)}

    root = tmp_path / "mirrors"
    root.mkdir()
    writer = MirrorWriter(str(root), load, stats, lambda: database.reader)
    # What a sleep does with a large batch of changed rows: hand over ids only. The pass is awaited
    # as a running daemon's is, with no deadline: a closing writer stops after CLOSE_SECONDS and
    # leaves the rest to the next open's heal, which on a loaded machine cut this pass short.
    writer.changed_ids(m.id for m in rows)
    await writer.flush_now()
    await writer.close()
    assert sum(asked) == len(rows) and max(asked) <= mirror_heal.BATCH
    for memory in rows:
        assert (root / "episodic" / f"{memory.id}.md").read_text(encoding="utf-8") == render(memory)
    assert (root / "stats.json").exists()
