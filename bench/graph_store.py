"""The entity graph's own costs at store sizes (`recall --hops` itself is bench/graph_hops.py).

For each size in `--sizes`, a store at the schema before the graph (migration 17) holding that many
memories, each naming two entities of its own (a CamelCase name and a file path) and one every
memory shares (a hub): the worst case for work that grows with the tenant's entities or a hub's
mentions. Then, timed on this machine:

- migration 18: building the graph of every stored memory (what an upgrade runs);
- indexing one more memory (what each remember, import, restore and merge adds to its write);
- `GET /v1/graph` (the 100 most named entities and their relations) and the walk of one memory's
  neighbours, on the store's connection.

A second table: `extract` (hippod.model.entities) on pasted text and on the runs that made the old
URL pattern quadratic.

    python bench/graph_store.py [--sizes 2000,20000,100000] [--no-extract]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import statistics
import tempfile
import time

import aiosqlite
from harness import log

from hippod.model import entities
from hippod.store.sqlite import graph_index, graph_reads, migrations
from hippod.store.sqlite.migrations_graph import m018_graph

GRAPH = migrations.MIGRATIONS.index(m018_graph) + 1
COLUMNS = (
    "id, content, source, origin_project, created, valid_from, last_retrieved, half_life_days, "
    "updated_at, content_digest, fts_content, fts_tags"
)


def text(i: int) -> str:
    return f"Comp{i}Service keeps its state in src/c{i % 97}/state_{i}.py and talks to SharedBus"


def insert(conn: sqlite3.Connection, start: int, count: int) -> list[str]:
    ids = [f"m{i:07d}" for i in range(start, start + count)]
    conn.executemany(
        f"INSERT INTO memories ({COLUMNS}) VALUES (?, ?, 'cli', '', 'x', 'x', 'x', 365, 'x', ?, ?, '')",
        [(memory_id, text(start + n), memory_id, text(start + n)) for n, memory_id in enumerate(ids)],
    )
    return ids


def store_before_graph(path: str, size: int) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    for number, migration in enumerate(migrations.MIGRATIONS[: GRAPH - 1], start=1):
        migration(conn)
        conn.execute(f"PRAGMA user_version = {number}")
    conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(GRAPH - 1),))
    conn.execute("BEGIN")
    insert(conn, 0, size)
    conn.execute("COMMIT")
    return conn


async def reads(path: str, runs: int) -> tuple[float, float]:
    view: list[float] = []
    walk: list[float] = []
    async with aiosqlite.connect(path) as conn:
        for _ in range(runs):
            started = time.perf_counter()
            await graph_reads.graph(conn, "default", entity=None, limit=100)
            view.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await graph_reads.neighbours(conn, "default", ["m0000000"])
            walk.append((time.perf_counter() - started) * 1000)
    return statistics.median(view), statistics.median(walk)


def measure(size: int, folder: str) -> tuple[int, float, int, float, float, float]:
    path = os.path.join(folder, f"store-{size}.db")
    conn = store_before_graph(path, size)
    log(f"{size} memories stored; migrating")
    started = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    m018_graph(conn)  # alone: the migrations after it are no part of the figure
    conn.execute(f"PRAGMA user_version = {GRAPH}")
    conn.execute("COMMIT")
    migrated = time.perf_counter() - started
    migrations.migrate(conn)
    entity_count = int(conn.execute("SELECT count(*) FROM graph_entities").fetchone()[0])
    conn.execute("BEGIN")
    added = insert(conn, size, 200)
    started = time.perf_counter()
    for memory_id in added:
        graph_index.index_sync(conn, [memory_id])
    one = (time.perf_counter() - started) * 1000 / len(added)
    conn.execute("COMMIT")
    conn.close()
    view, walk = asyncio.run(reads(path, 20))
    return size, migrated, entity_count, one, view, walk


def extraction() -> list[tuple[str, int, float]]:
    cases = {
        "a pasted log (500 KB of prose and names)": "RetryBudget failed in src/a/b.py again; " * 12_500,
        "`a.a.a.…` (200 KB)": "a." * 100_000,
        "`ab.ab.…` (200 KB)": "ab." * 66_667,
        "`a-a-a-…` (200 KB)": "a-" * 100_000,
    }
    rows = []
    for name, content in cases.items():
        started = time.perf_counter()
        entities.extract(content, [], None, "cli")
        rows.append((name, len(content), (time.perf_counter() - started) * 1000))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="2000,20000,100000")
    parser.add_argument("--no-extract", action="store_true", help="leave out the second table")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="graph-store-")
    try:
        rows = [measure(int(size), folder) for size in args.sizes.split(",") if size]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    heads = (
        "memories",
        "migration 18 (s)",
        "entities",
        "index one memory (ms)",
        "graph view, 100 (ms)",
        "walk (ms)",
    )
    print("| " + " | ".join(heads) + " |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size, migrated, entity_count, one, view, walk in rows:
        print(f"| {size:,} | {migrated:.1f} | {entity_count:,} | {one:.2f} | {view:.1f} | {walk:.2f} |")
    if args.no_extract:
        return
    print()
    print("| `extract` on | characters | ms |")
    print("|---|---:|---:|")
    for name, length, took in extraction():
        print(f"| {name} | {length:,} | {took:.1f} |")


if __name__ == "__main__":
    main()
