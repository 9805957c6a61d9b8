"""The day layout of the mirrors (mirrors/mirror_days.py): one file per layer and day, new memories
appended, deletions and layer moves learnt from the database's triggers, recalls rewriting nothing,
and a change of layout healing the folders from one layout into the other."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from hippod.mirrors import mirror_days
from hippod.mirrors.mirror_text import day_header, render, section
from hippod.mirrors.mirrors import MirrorWriter
from hippod.model.memory import Memory
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories

DAY1 = "2026-11-30T09:00:00.000Z"
DAY2 = "2026-12-01T10:00:00.000Z"


class Layout:
    """A store's mirrors.layout that a test can change between passes."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __call__(self) -> str:
        return self.value


def _writer(database: dbmod.Database, root: Path, layout: Layout) -> MirrorWriter:
    async def load(ids: list[str]) -> list[Memory]:
        return await memories.get_many(database.reader, ids)

    async def stats() -> dict[str, object]:
        return {}

    root.mkdir(exist_ok=True)
    return MirrorWriter(str(root), load, stats, lambda: database.reader, layout)


async def _insert(database: dbmod.Database, rows: list[Memory]) -> None:
    async with database.transaction() as conn:
        for memory in rows:
            assert await memories.insert(conn, memory)


async def _healed(
    database: dbmod.Database, rows: list[Memory], tmp_path: Path, layout: Layout | None = None
) -> tuple[MirrorWriter, Path]:
    """A writer over a database holding `rows`, its folders healed once: (writer, store root)."""
    await _insert(database, rows)
    root = tmp_path / "store"
    writer = _writer(database, root, layout or Layout("day"))
    writer.heal()
    await writer.flush_now()
    return writer, root


async def _add(database: dbmod.Database, writer: MirrorWriter, rows: list[Memory]) -> None:
    """Store new memories as a remember does, and wait for their mirror pass."""
    await _insert(database, rows)
    writer.changed(rows)
    await writer.flush_now()


async def _current(database: dbmod.Database, rows: list[Memory]) -> list[Memory]:
    by_id = {m.id: m for m in await memories.get_many(database.reader, [r.id for r in rows])}
    return [by_id[r.id] for r in rows if r.id in by_id]


def _day_text(layer: str, day: str, rows: list[Memory], part: int = 1) -> str:
    return day_header(layer, day, part) + "".join(section(m) for m in rows)


def _md_files(root: Path) -> list[str]:
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*.md") if p.parts[len(root.parts)] != "buffer"
    )


async def test_a_file_per_layer_and_day_in_the_order_stored(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    rows = [
        make_memory("deploys need the VPN", created=DAY2),
        make_memory("the cache key holds the tenant", created=DAY1),
        make_memory("staging runs on the old image", created=DAY2),
        make_memory("a rule of the repo", created=DAY2, layer="semantic"),
    ]
    writer, root = await _healed(database, rows, tmp_path)
    assert _md_files(root) == [
        "episodic/2026/11/2026-11-30.md",
        "episodic/2026/12/2026-12-01.md",
        "semantic/2026/12/2026-12-01.md",
    ]
    now = await _current(database, rows)
    day2 = (root / "episodic/2026/12/2026-12-01.md").read_text(encoding="utf-8")
    assert day2 == _day_text("episodic", "2026-12-01", [now[0], now[2]])
    # The numbers recalls, outcomes and sleeps change are not in a day file; the rest are.
    for usage in ("strength:", "retrieval_count:", "last_retrieved:", "half_life_days:", "outcome_"):
        assert usage not in day2
    assert f"## {rows[0].id}\n" in day2 and "confidence: " in day2 and "deploys need the VPN\n" in day2
    assert (await writer.check()).missing == 0
    await writer.close()


async def test_new_memories_are_appended_and_a_recall_rewrites_nothing(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    first = make_memory("first lesson", created=DAY2)
    writer, root = await _healed(database, [first], tmp_path)
    path = root / "episodic/2026/12/2026-12-01.md"
    inode = path.stat().st_ino
    second = make_memory("second lesson", created=DAY2)
    await _add(database, writer, [second])
    # Appended in place (a rewrite renames a new file over the old one, with a new inode).
    assert path.stat().st_ino == inode
    assert path.read_text(encoding="utf-8") == _day_text(
        "episodic", "2026-12-01", await _current(database, [first, second])
    )
    async with database.transaction() as conn:
        await memories.strengthen(conn, [first.id], "2026-12-02T00:00:00.000Z", 2.0)
    mtime = path.stat().st_mtime_ns
    writer.changed_ids([first.id])
    await writer.flush_now()
    assert path.stat().st_mtime_ns == mtime and path.stat().st_ino == inode
    await writer.close()


async def test_a_file_changed_by_hand_is_rewritten_rather_than_appended_to(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    first = make_memory("first lesson", created=DAY2)
    writer, root = await _healed(database, [first], tmp_path)
    path = root / "episodic/2026/12/2026-12-01.md"
    with path.open("a", encoding="utf-8") as handle:
        handle.write("a note typed into the mirror\n")
    second = make_memory("second lesson", created=DAY2)
    await _add(database, writer, [second])
    assert path.read_text(encoding="utf-8") == _day_text(
        "episodic", "2026-12-01", await _current(database, [first, second])
    )
    await writer.close()


async def test_deletions_and_layer_moves_reach_the_day_files(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    rows = [make_memory(f"lesson {i}", created=DAY2) for i in range(3)] + [make_memory("alone", created=DAY1)]
    writer, root = await _healed(database, rows, tmp_path)
    async with database.transaction() as conn:
        assert await memories.delete(conn, "default", rows[1].id)
        assert await memories.delete(conn, "default", rows[3].id)
        await conn.execute("UPDATE memories SET layer = 'semantic' WHERE id = ?", (rows[2].id,))
    # Only the ids are handed over: the days they left come from the database.
    writer.deleted([rows[1].id, rows[3].id])
    writer.changed_ids([rows[2].id])
    await writer.flush_now()
    assert _md_files(root) == ["episodic/2026/12/2026-12-01.md", "semantic/2026/12/2026-12-01.md"]
    now = await _current(database, rows)
    assert (root / "episodic/2026/12/2026-12-01.md").read_text(encoding="utf-8") == _day_text(
        "episodic", "2026-12-01", [now[0]]
    )
    assert (root / "semantic/2026/12/2026-12-01.md").read_text(encoding="utf-8") == _day_text(
        "semantic", "2026-12-01", [now[1]]
    )
    # The emptied day's file went, and its month and year folders with it.
    assert not (root / "episodic/2026/11").exists()
    await writer.close()


async def test_a_full_day_goes_on_in_parts(
    database: dbmod.Database,
    make_memory: Callable[..., Memory],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mirror_days, "PART", 2)
    rows = [make_memory(f"lesson {i}", created=DAY2) for i in range(3)]
    writer, root = await _healed(database, rows, tmp_path)
    more = [make_memory(f"later lesson {i}", created=DAY2) for i in range(2)]
    await _insert(database, more)
    writer.changed_ids([m.id for m in more])  # only the ids: appended from the rows read back
    await writer.flush_now()
    folder = root / "episodic/2026/12"
    assert sorted(os.listdir(folder)) == ["2026-12-01.md", "2026-12-01.p2.md", "2026-12-01.p3.md"]
    now = await _current(database, rows + more)
    assert (folder / "2026-12-01.p2.md").read_text(encoding="utf-8") == _day_text(
        "episodic", "2026-12-01", now[2:4], 2
    )
    async with database.transaction() as conn:
        assert await memories.delete(conn, "default", rows[0].id)
    writer.deleted([rows[0].id])
    await writer.flush_now()
    # Four left: two parts, the later memories moved up.
    assert sorted(os.listdir(folder)) == ["2026-12-01.md", "2026-12-01.p2.md"]
    assert (folder / "2026-12-01.md").read_text(encoding="utf-8") == _day_text(
        "episodic", "2026-12-01", now[1:3]
    )
    assert (await writer.check()).missing == 0
    await writer.close()


async def test_changing_the_layout_heals_into_the_other(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    rows = [
        make_memory("deploys need the VPN", created=DAY2),
        make_memory("undated one", created="yesterday"),
    ]
    layout = Layout("memory")
    writer, root = await _healed(database, rows, tmp_path, layout)
    now = await _current(database, rows)
    assert _md_files(root) == sorted(f"episodic/{m.id}.md" for m in rows)
    layout.value = "day"
    writer.heal()
    await writer.flush_now()
    assert _md_files(root) == ["episodic/2026/12/2026-12-01.md", "episodic/undated.md"]
    assert (root / "episodic/undated.md").read_text(encoding="utf-8") == _day_text(
        "episodic", "undated", [now[1]]
    )
    layout.value = "memory"
    writer.heal()
    await writer.flush_now()
    assert _md_files(root) == sorted(f"episodic/{m.id}.md" for m in rows)
    assert (root / f"episodic/{rows[0].id}.md").read_text(encoding="utf-8") == render(now[0])
    assert not (root / "episodic/2026").exists()
    await writer.close()


async def test_status_counts_missing_day_files(
    database: dbmod.Database, make_memory: Callable[..., Memory], tmp_path: Path
) -> None:
    rows = [make_memory("one", created=DAY1), make_memory("two", created=DAY2)]
    writer, root = await _healed(database, rows, tmp_path)
    (root / "episodic/2026/11/2026-11-30.md").unlink()
    assert (await writer.check()).missing == 1
    writer.heal()
    await writer.flush_now()
    assert (await writer.check()).missing == 0
    assert (root / "episodic/2026/11/2026-11-30.md").is_file()
    await writer.close()


async def test_an_unknown_layout_is_named_and_the_default_kept(
    database: dbmod.Database,
    make_memory: Callable[..., Memory],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    rows = [make_memory("one", created=DAY1)]
    writer, root = await _healed(database, rows, tmp_path, Layout("weekly"))
    assert _md_files(root) == [f"episodic/{rows[0].id}.md"]
    assert "unknown mirrors.layout 'weekly'; using 'memory'" in caplog.text
    await writer.close()
