"""A large store's first pass read by two processes (store/sqlite/scan_process.py) makes the plan one
process makes, and the planner falls back to one snapshot when the helper cannot help."""

from __future__ import annotations

import itertools
import os
import sqlite3
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from hippod.base import child
from hippod.model.memory import Memory
from hippod.model.sleep_plan import Settings
from hippod.model.sleep_scan import Scan
from hippod.model.wordsets import pairs
from hippod.store.sleep_rows import Planned
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories, scan_process, sleep_process, sleep_traits
from hippod.store.sqlite.sleep_snapshot import Moved, SnapshotReader

NOW = datetime(2026, 3, 1, tzinfo=UTC)
RECENT = "2026-02-20T00:00:00.000Z"
OLD = "2016-01-01T00:00:00.000Z"  # ten years unused: a 365-day memory has faded
TEXTS = [
    "Deploy to staging failed because the migration was skipped",
    "Run the linter before every commit in this repository please",
    "The feature flag is enabled for production users",
    "Always use Sled for local storage",
    "wip",
    "Staging deploy failed: the migration step was skipped again today",
    "Run the linter before every commit in this repository",
    "The feature flag is disabled for production users",
    "Never use Sled for local storage",
    "数据库迁移 需要 先运行 migrate 命令",
]


async def _fill(database: dbmod.Database, make_memory: Callable[..., Memory]) -> None:
    """Rows of two tenants, the second first seen in the later half; pairs to merge, dedupe and
    conflict across the halves; junk, faded, tagged and pinned rows."""
    rows: list[Memory] = []
    for n, text in enumerate(TEXTS * 3):
        at = OLD if n == 4 else f"2026-02-{10 + n % 15:02d}T00:00:{n % 60:02d}.000Z"
        tenant = (
            "other" if n >= len(TEXTS) * 3 // 2 and n % 2 else "default"
        )  # "other" first in the later half
        extra: dict[str, Any] = {"tags": ["error"]} if n % 7 == 0 else {}
        rows.append(
            make_memory(
                f"{text} #{n // len(TEXTS)}" if n % 3 else text,
                tenant_id=tenant,
                created=at,
                updated_at=at,
                last_retrieved=at,
                pinned=n == 13,
                **extra,
            )
        )
    async with database.transaction() as conn:
        for memory in rows:
            assert await memories.insert(conn, memory)
        await memories.set_meta(conn, "last_sleep", "2026-02-15T00:00:00.000Z")


def _plan(path: str, *, split: bool) -> Planned:
    ids = itertools.count(1)
    spill = sleep_traits.new_path(os.path.join(os.path.dirname(path), "spill"))
    settings = Settings(now=NOW, replay_count=3)
    return sleep_process.plan_snapshot(path, settings, lambda: f"sem_{next(ids)}", spill, split=split)


def _outcome(planned: Planned) -> Any:
    result, marks, statuses = planned
    return (
        [sorted(m.id for m in merge.members) for merge in result.merges],
        [merge.semantic.content for merge in result.merges],
        [(d.deleted.id, d.kept.id, d.overlap) for d in result.duplicates],
        [(c.a, c.b) for c in result.conflicts.insert],
        [(m.id, value) for m, value in result.faded.dormant],
        [(j.id, j.reason) for j in result.junk_removed + result.junk_warnings],
        sorted(result.refreshed),
        [m.id for m in result.replayed],
        (result.live.count, result.live.active, result.live.tenants, sorted(result.live.texts)),
        sorted(m.content for m in result.live.share),
        sorted(marks),
        statuses,
    )


@pytest.fixture
def split_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split every store, on any machine."""
    monkeypatch.setattr(scan_process, "SPLIT_FROM", 1)
    monkeypatch.setattr(scan_process, "SHARED_FROM", 0)
    monkeypatch.setattr(scan_process, "two_cores", lambda: True)


@pytest.fixture
def planner_shares(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The `part` of every pair join the planning process makes itself (the helper's are its own)."""
    shares: list[tuple[int, int]] = []

    def counted(*args: Any, part: tuple[int, int] = (0, 1), **kwargs: Any) -> list[tuple[int, int]]:
        shares.append(part)
        return pairs(*args, part=part, **kwargs)

    monkeypatch.setattr("hippod.store.sqlite.scan_process.pairs", counted)
    return shares


@pytest.mark.usefixtures("split_small")
async def test_a_first_pass_read_by_two_processes_makes_the_plan_of_one(
    database: dbmod.Database,
    make_memory: Callable[..., Memory],
    monkeypatch: pytest.MonkeyPatch,
    planner_shares: list[tuple[int, int]],
) -> None:
    await _fill(database, make_memory)
    alone = _plan(database.path, split=False)
    halves: list[int] = []
    extend = Scan.extend

    def counted(scan: Scan, other: Scan) -> None:
        halves.append(len(other))
        extend(scan, other)

    monkeypatch.setattr(Scan, "extend", counted)
    split = _plan(database.path, split=True)
    assert halves == [len(TEXTS) * 3 // 2]  # the helper read the later half
    assert planner_shares and set(planner_shares) == {(0, 2)}  # ... and found the other share of every join
    assert _outcome(split) == _outcome(alone)
    merged, _, duplicates, conflicts, faded, junk, *_ = _outcome(alone)
    assert merged and duplicates and conflicts and faded and junk  # every phase had work
    # The traits both halves worked out are in the planner's one spill file, the helper's gone.
    assert split[0].traits_file is not None and alone[0].traits_file is not None
    assert _spilled(split[0].traits_file) == _spilled(alone[0].traits_file)
    assert len(_spilled(alone[0].traits_file)) == len(TEXTS) * 3 - 1  # all but the faded row's
    assert not os.path.exists(f"{split[0].traits_file}-later")


def _spilled(path: str) -> list[Any]:
    """The rows of a spill file, sorted."""
    rows: list[Any] = []
    offset = 0
    while True:
        more, offset = sleep_traits._slice(path, offset)
        if not more:
            return sorted(rows)
        rows += more


@pytest.mark.usefixtures("split_small")
async def test_a_helper_that_ends_before_its_snapshot_leaves_the_plan_to_one_process(
    database: dbmod.Database, make_memory: Callable[..., Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    await _fill(database, make_memory)
    alone = _plan(database.path, split=False)
    monkeypatch.setattr(child, "argv", lambda module: [sys.executable, "-c", "pass"])
    assert _outcome(_plan(database.path, split=True)) == _outcome(alone)


@pytest.mark.usefixtures("split_small")
async def test_a_helper_gone_after_its_half_leaves_its_share_of_the_pairs_to_the_planner(
    database: dbmod.Database,
    make_memory: Callable[..., Memory],
    monkeypatch: pytest.MonkeyPatch,
    planner_shares: list[tuple[int, int]],
) -> None:
    await _fill(database, make_memory)
    alone = _plan(database.path, split=False)
    shares = planner_shares
    half = scan_process.Helper.half

    def half_then_gone(helper: scan_process.Helper) -> scan_process.Half | None:
        got = half(helper)
        helper._proc.kill()
        helper._proc.wait()
        return got

    monkeypatch.setattr(scan_process.Helper, "half", half_then_gone)
    assert _outcome(_plan(database.path, split=True)) == _outcome(alone)
    # Merge's and dedupe's joins, one for each tenant: both shares of each made here.
    assert shares and shares.count((1, 2)) == shares.count((0, 2)) == len(shares) // 2


@pytest.mark.usefixtures("split_small")
async def test_a_memory_gone_between_the_two_snapshots_has_the_plan_made_again_from_one(
    database: dbmod.Database, make_memory: Callable[..., Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    await _fill(database, make_memory)
    with SnapshotReader(database.path) as source:
        after = source.halfway(1)
    merged = _plan(database.path, split=False)[0].merges
    later = [m.id for merge in merged for m in merge.members if _rowid(database.path, m.id) > (after or 0)]
    assert later  # a merge member the helper reads, which the planner asks for whole
    ready = scan_process.Helper.ready

    def ready_then_delete(helper: scan_process.Helper) -> bool:
        # After the helper's snapshot began, before the planner's: the helper reads the row, the
        # planner's snapshot does not hold it when the merge asks for it whole.
        began = ready(helper)
        with sqlite3.connect(database.path) as conn:
            conn.execute("DELETE FROM memories WHERE id = ?", (later[0],))
        return began

    monkeypatch.setattr(scan_process.Helper, "ready", ready_then_delete)
    split = _plan(database.path, split=True)
    assert later[0] not in {m.id for merge in split[0].merges for m in merge.members}
    assert _outcome(split) == _outcome(_plan(database.path, split=False))


def _rowid(path: str, memory_id: str) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT rowid FROM memories WHERE id = ?", (memory_id,)).fetchone()[0])


async def test_a_snapshot_asked_for_a_memory_it_does_not_hold_says_so(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    await _fill(database, make_memory)
    with SnapshotReader(database.path) as source:
        assert len(source.fetch(["mem_000000000001"])) == 1
        with pytest.raises(Moved):
            source.fetch(["mem_000000000001", "mem_gone"])
