"""What the mirrors cost in each layout, written by hippod's own mirror writer: one file per memory
(`mirrors.layout: "memory"`, the default) against one file per layer and day (`"day"`).

A measuring tool, not a test: it prints a table and asserts nothing about time. No daemon runs: for
each size a store database is filled with the perf bench's corpus (corpus.py), MEMORIES_A_DAY
memories a day of creation, and its MirrorWriter (mirrors/mirrors.py) is driven directly, as the
daemon drives it after each commit. For each layout:

- the heal that writes every mirror of the store (what opening it, or switching layout, costs);
- a pass after NEW_BATCH new memories of the last day (what an import or a burst of remembers costs);
- a pass after one memory of an old day changed (pinned);
- a pass after DELETE_COUNT memories of different days were deleted (a sleep's dedupe, a reject);
- a pass over TOUCH_COUNT memories whose usage numbers alone changed (a recall's strengthening, as a
  sleep hands such rows over): mirrors hold none of them, so each is compared and none written;
- files, inodes and disk allocated;
- then, in a fresh git repo holding the mirrors (hard links, with hippod's `.hippo/.gitignore`):
  `git status` untracked, `git add`, `git commit`, `git status` committed (mirror_layouts.git_costs).

Usage: python bench/mirror_days.py [--sizes 10000,100000,1000000] [--layouts memory,day]
       [--tmpdir /tmp] [--git-up-to 1000000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta

import mirror_layouts
from corpus import TEXT_SEED, make_corpus, make_memories
from harness import log

from hippod.mirrors.mirror_heal import FOLDERS
from hippod.mirrors.mirrors import MirrorWriter
from hippod.model.memory import Memory
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories

MEMORIES_A_DAY = 1_000
NEW_BATCH = 1_000
DELETE_COUNT = 20
TOUCH_COUNT = 50
INSERT_BATCH = 20_000
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def _stamp(n: int) -> str:
    """The created time of the n-th memory: MEMORIES_A_DAY a day from START, a few seconds apart."""
    day, within = divmod(n, MEMORIES_A_DAY)
    moment = START + timedelta(days=day, seconds=within * 30)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _memory(n: int, text: str, tags: list[str], rng: random.Random) -> Memory:
    stamp = _stamp(n)
    return Memory(
        id=f"mem_{rng.getrandbits(48):012x}", tenant_id="default", content=text, layer="episodic",
        kind="distilled", created=stamp, valid_from=stamp, last_retrieved=stamp, retrieval_count=0,
        half_life_days=7.0, strength=1.0, emotional_valence="neutral", schema_fit=0.5, tags=tags,
        source="import", confidence="observed", pinned=False, outcome_positive=0, outcome_negative=0,
        outcome_score=None, updated_at=stamp,
    )  # fmt: skip


async def _fill(database: dbmod.Database, first: int, count: int, rng: random.Random) -> list[Memory]:
    corpus = make_corpus()
    rows = [
        _memory(first + i, text, tags, rng)
        for i, (text, tags) in enumerate(make_memories(corpus, count, TEXT_SEED + first))
    ]
    for start in range(0, len(rows), INSERT_BATCH):
        async with database.transaction() as conn:
            for memory in rows[start : start + INSERT_BATCH]:
                await memories.insert(conn, memory)
    return rows


def _writer(database: dbmod.Database, root: str, layout: str) -> MirrorWriter:
    async def load(ids: list[str]) -> list[Memory]:
        return await memories.get_many(database.reader, ids)

    async def stats() -> dict[str, object]:
        return {}

    return MirrorWriter(root, load, stats, lambda: database.reader, lambda: layout)


async def _timed(writer: MirrorWriter) -> float:
    started = time.perf_counter()
    await writer.flush_now()
    return time.perf_counter() - started


def _disk(root: str) -> tuple[int, int, float]:
    """(mirror files, inodes, MB allocated) under the memory folders."""
    files = inodes = allocated = 0
    for folder in FOLDERS:
        for where, _, names in os.walk(os.path.join(root, folder)):
            inodes += 1 + len(names)
            for name in names:
                files += 1
                allocated += os.lstat(os.path.join(where, name)).st_blocks * 512
    return files, inodes, allocated / 2**20


async def _measure(size: int, layout: str, base: str, git_up_to: int) -> list[str]:
    folder = tempfile.mkdtemp(prefix=f"md{size}-{layout}-", dir=base)
    root = os.path.join(folder, "store")
    os.makedirs(root)
    database, _ = await dbmod.Database.open(os.path.join(root, "hippo.db"))
    rng = random.Random(size)
    try:
        started = time.perf_counter()
        rows = await _fill(database, 0, size, rng)
        log(f"{size} {layout}: filled in {time.perf_counter() - started:.1f} s")
        writer = _writer(database, root, layout)
        writer.heal()
        heal_s = await _timed(writer)
        new = await _fill(database, size, NEW_BATCH, rng)
        writer.changed(new)
        append_s = await _timed(writer)
        old = rows[len(rows) // 3]
        async with database.transaction() as conn:
            await conn.execute("UPDATE memories SET pinned = 1 WHERE id = ?", (old.id,))
        writer.changed_ids([old.id])
        change_s = await _timed(writer)
        gone = [rows[i].id for i in range(7, len(rows), max(1, len(rows) // DELETE_COUNT))][:DELETE_COUNT]
        async with database.transaction() as conn:
            for memory_id in gone:
                await memories.delete(conn, "default", memory_id)
        writer.deleted(gone)
        delete_s = await _timed(writer)
        touched = [rows[i].id for i in range(3, len(rows), max(1, len(rows) // TOUCH_COUNT))][:TOUCH_COUNT]
        async with database.transaction() as conn:
            await memories.strengthen(conn, touched, "2026-12-03T10:00:00.000Z", 2.0)
        writer.changed_ids(touched)
        touch_s = await _timed(writer)
        await writer.close()
        files, inodes, mb = _disk(root)
        row = (
            f"{size:>9}  {layout:<7}  {heal_s:>8.1f}  {append_s * 1000:>9.0f}  {change_s * 1000:>9.0f}"
            f"  {delete_s * 1000:>9.0f}  {touch_s * 1000:>8.0f}  {files:>9,}  {inodes:>9,}  {mb:>8.0f}"
        )
        rows_out = [row]
        if size <= git_up_to:
            repo = mirror_layouts.new_repo(os.path.join(folder, "proj"))
            for name in FOLDERS:
                source = os.path.join(root, name)
                if os.path.isdir(source):
                    subprocess.run(["cp", "-al", source, os.path.join(repo, ".hippo", name)], check=True)
            rows_out.append("git: " + mirror_layouts.git_costs(repo, layout, size))
        return rows_out
    finally:
        await database.close()
        shutil.rmtree(folder, ignore_errors=True)


HEADER = (
    f"{'size':>9}  {'layout':<7}  {'heal s':>8}  {'+1000 ms':>9}  {'1 old ms':>9}"
    f"  {'20 del ms':>9}  {'recall':>8}  {'files':>9}  {'inodes':>9}  {'MB':>8}"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--layouts", default="memory,day")
    parser.add_argument("--tmpdir", default="/tmp")
    parser.add_argument("--git-up-to", type=int, default=1_000_000, help="git costs up to this size")
    args = parser.parse_args(argv)
    table: list[str] = []
    gits: list[str] = []
    for size in (int(s) for s in args.sizes.split(",") if s):
        for layout in (x for x in args.layouts.split(",") if x):
            rows = asyncio.run(_measure(size, layout, args.tmpdir, args.git_up_to))
            table.append(rows[0])
            gits += [r.removeprefix("git: ") for r in rows[1:]]
            log(rows[0])
    print("Mirror passes by hippod's MirrorWriter, no daemon (heal: every mirror written; the other")
    print("columns: one pass after that change, ms; recall: 50 memories whose usage numbers alone")
    print("changed, handed over as a sleep hands them over: compared, none written)")
    print(HEADER)
    print("\n".join(table))
    if gits:
        print()
        print("git in a project holding the mirrors (seconds; two runs of each status):")
        print(mirror_layouts.GIT_HEADER)
        print("\n".join(gits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
