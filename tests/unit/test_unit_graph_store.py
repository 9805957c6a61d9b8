"""The entity graph's SQL (store/sqlite/graph_index.py, graph_reads.py, migrations_graph.py) on real
SQLite files: its work per memory or per read stays the same however large the graph grows (counted
in SQLite's own virtual-machine steps, not timed), and the counts it keeps match its rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import aiosqlite

from hippod.store.sqlite import graph_index, graph_reads, migrations
from hippod.store.sqlite.migrations_graph import m018_graph

Opener = Callable[[int], sqlite3.Connection]
GRAPH = migrations.MIGRATIONS.index(m018_graph) + 1


def _insert(conn: sqlite3.Connection, rows: list[tuple[str, str]]) -> None:
    columns = "id, content, source, origin_project, created, valid_from, last_retrieved, half_life_days, "
    columns += "updated_at, content_digest, fts_content, fts_tags"
    conn.execute("BEGIN")  # one transaction: the connection is in autocommit mode, as migrate wants it
    conn.executemany(
        f"INSERT INTO memories ({columns}) VALUES (?, ?, 'cli', '', 'x', 'x', 'x', 365, 'x', ?, '', '')",
        [(memory_id, content, memory_id) for memory_id, content in rows],
    )
    conn.execute("COMMIT")


def _texts(count: int, start: int = 0) -> list[tuple[str, str]]:
    """Memories each naming entities of their own and one shared by all (a hub)."""
    return [
        (f"m{i:06d}", f"Comp{i}Service calls helper_{i} in src/c{i}/main_{i}.py via SharedBus")
        for i in range(start, start + count)
    ]


def _steps(conn: sqlite3.Connection, work: Callable[[], object]) -> int:
    counted = [0]

    def tick() -> int:
        counted[0] += 1
        return 0

    conn.set_progress_handler(tick, 100)
    try:
        work()
    finally:
        conn.set_progress_handler(None, 1)
    return counted[0]


def test_a_batchs_entities_are_looked_up_by_index(old_store: Opener) -> None:
    conn = old_store(len(migrations.MIGRATIONS))
    plan = [str(r[3]) for r in conn.execute("EXPLAIN QUERY PLAN " + graph_index._IDS, ("[]",))]
    lookups = [step for step in plan if "graph_entities" in step or step.startswith(("SCAN e", "SEARCH e"))]
    assert lookups and all("(tenant_id=? AND type=? AND name=?)" in step for step in lookups), plan


def _migration_steps_per_memory(tmp_path: Path, old_store: Opener, count: int) -> float:
    conn = old_store(GRAPH - 1)
    _insert(conn, _texts(count))
    steps = _steps(conn, lambda: migrations.migrate(conn))
    assert conn.execute("SELECT count(DISTINCT memory_id) FROM graph_mentions").fetchone()[0] == count
    conn.close()
    for leftover in tmp_path.glob("hippo.db*"):
        leftover.unlink()
    return steps / count


def test_the_migration_does_the_same_work_per_memory_at_any_size(tmp_path: Path, old_store: Opener) -> None:
    small = _migration_steps_per_memory(tmp_path, old_store, 200)
    large = _migration_steps_per_memory(tmp_path, old_store, 2000)
    # Reading every entity per memory made the large store's figure ten times the small one's.
    assert large < small * 1.5, (small, large)


# Three memories saying one relation (AlphaWidget, BetaWidget): its count goes 3, then 2, then 1.
_SAME_RELATION = [(f"r{i}", f"AlphaWidget feeds BetaWidget, take {i}") for i in range(3)]


def _edges_and_relations(conn: sqlite3.Connection) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """Each relation's kept count of memories, and its count made from the relations themselves."""
    edges = conn.execute("SELECT from_id, to_id, rel, memories FROM graph_edges ORDER BY 1, 2, 3").fetchall()
    said = conn.execute(
        "SELECT from_id, to_id, rel, count(*) FROM graph_relations GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
    ).fetchall()
    return edges, said


def _count_of_alpha_beta(conn: sqlite3.Connection) -> int:
    return int(
        conn.execute(
            "SELECT memories FROM graph_edges JOIN graph_entities a ON a.id = from_id "
            "JOIN graph_entities b ON b.id = to_id WHERE a.name = 'AlphaWidget' AND b.name = 'BetaWidget'"
        ).fetchone()[0]
    )


def test_the_kept_counts_match_the_rows_through_writes_and_removals(old_store: Opener) -> None:
    conn = old_store(len(migrations.MIGRATIONS))
    _insert(conn, _texts(40) + _SAME_RELATION)
    graph_index.index_sync(conn, [f"m{i:06d}" for i in range(40)], fresh=True)
    graph_index.index_sync(conn, ["r0", "r1"], fresh=True)
    graph_index.index_sync(conn, ["r2"], fresh=True)
    assert _count_of_alpha_beta(conn) == 3
    # A memory indexed twice as fresh still says its relation once.
    graph_index.index_sync(conn, ["r2"], fresh=True)
    assert _count_of_alpha_beta(conn) == 3
    conn.execute("DELETE FROM memories WHERE id IN ('m000001', 'm000002', 'r0')")
    conn.execute("UPDATE memories SET kind = 'archived' WHERE id = 'm000003'")
    conn.execute("UPDATE memories SET content = 'Now only SharedBus and OtherThing' WHERE id = 'm000004'")
    graph_index.index_sync(conn, ["m000004"])
    # Indexed again with its text unchanged: its relation is taken back and said again, once.
    graph_index.index_sync(conn, ["r1", "r2"])
    assert _count_of_alpha_beta(conn) == 2
    conn.execute("UPDATE memories SET content = 'AlphaWidget alone now' WHERE id = 'r1'")
    graph_index.index_sync(conn, ["r1"])
    assert _count_of_alpha_beta(conn) == 1
    kept = conn.execute("SELECT id, mentions FROM graph_entities ORDER BY id").fetchall()
    counted = conn.execute(
        "SELECT entity_id, count(*) FROM graph_mentions GROUP BY entity_id ORDER BY entity_id"
    ).fetchall()
    assert kept == counted
    assert dict(conn.execute("SELECT name, mentions FROM graph_entities").fetchall())["SharedBus"] == 37
    edges, said = _edges_and_relations(conn)
    assert edges == said and len(edges) > 40


async def _read_steps(path: Path, read: Callable[[aiosqlite.Connection], object]) -> int:
    counted = [0]

    def tick() -> int:
        counted[0] += 1
        return 0

    async with aiosqlite.connect(path) as conn:
        await conn.set_progress_handler(tick, 100)
        await read(conn)  # type: ignore[misc]
    return counted[0]


async def _graph_read_steps(tmp_path: Path, old_store: Opener, count: int) -> tuple[int, int]:
    conn = old_store(len(migrations.MIGRATIONS))
    _insert(conn, _texts(count))
    conn.execute("BEGIN")
    graph_index.index_sync(conn, [f"m{i:06d}" for i in range(count)])
    conn.execute("COMMIT")
    conn.close()
    path = tmp_path / "hippo.db"
    shown = await _read_steps(path, lambda c: graph_reads.graph(c, "default", entity=None, limit=10))
    walked = await _read_steps(path, lambda c: graph_reads.neighbours(c, "default", ["m000000"]))
    for leftover in tmp_path.glob("hippo.db*"):
        leftover.unlink()
    return shown, walked


async def test_the_graph_view_and_the_walk_read_no_more_for_a_larger_hub(
    tmp_path: Path, old_store: Opener
) -> None:
    small_view, small_walk = await _graph_read_steps(tmp_path, old_store, 100)
    large_view, large_walk = await _graph_read_steps(tmp_path, old_store, 3000)
    # Counting the hub's mentions on each read made both grow with the store.
    assert large_view < small_view * 1.5, (small_view, large_view)
    assert large_walk < small_walk * 1.5, (small_walk, large_walk)


def test_an_upgrade_counts_each_relation_once(old_store: Opener) -> None:
    """Migration 18 indexes the stored memories, counting each relation once."""
    conn = old_store(GRAPH - 1)
    _insert(conn, _texts(30) + _SAME_RELATION)
    migrations.migrate(conn)
    edges, said = _edges_and_relations(conn)
    assert edges == said and len(edges) > 30
    assert _count_of_alpha_beta(conn) == 3


# The trigger migration 18 made before migration 24: it raised a relation's count for each row.
_OLD_TRIGGER = """CREATE TRIGGER graph_edge_said AFTER INSERT ON graph_relations BEGIN
    INSERT INTO graph_edges (from_id, to_id, rel, memories) VALUES (new.from_id, new.to_id, new.rel, 1)
        ON CONFLICT (from_id, to_id, rel) DO UPDATE SET memories = memories + 1;
END"""


def test_a_store_graphed_before_migration_24_keeps_one_count_per_memory(old_store: Opener) -> None:
    conn = old_store(migrations.MIGRATIONS.index(migrations.m024_edges_counted))
    conn.execute(_OLD_TRIGGER)
    _insert(conn, _SAME_RELATION[:2])
    conn.execute(graph_index._RELATION.replace("INSERT OR IGNORE", "INSERT"), ("r0", 1, 2, "mentioned-with"))
    migrations.migrate(conn)
    triggers = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert "graph_edge_said" not in triggers and "graph_edge_unsaid" in triggers
    # What the old trigger counted stays; the store's next writes count once each.
    graph_index.index_sync(conn, ["r1"], fresh=True)
    assert _count_of_alpha_beta(conn) == 2  # the row the old trigger counted, and r1's
    edges, said = _edges_and_relations(conn)
    assert edges == said
