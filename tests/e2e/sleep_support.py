"""Helpers for the sleep, conflict and sharing e2e tests: planting rows with hippod's own store code
into a real database file, reading tables back, and snapshotting a store's files."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippod.model.memory import Memory
from hippod.store.sqlite import remembers
from hippod.store.sqlite.db import Database

if TYPE_CHECKING:
    from e2e.harness import Hippo

STAMP = "2026-01-01T00:00:00.000Z"
# Rows per statement when planting: the daemon's own batch insert, well inside SQLite's bound on a
# statement's parameters.
PLANT_BATCH = 500


def make(content: str, **fields: Any) -> Memory:
    """A memory with the defaults of memory-model.md §6, created at STAMP."""
    values: dict[str, Any] = {
        "id": "mem_" + secrets.token_hex(6),
        "tenant_id": "default",
        "content": content,
        "layer": "episodic",
        "kind": "distilled",
        "created": STAMP,
        "valid_from": STAMP,
        "last_retrieved": STAMP,
        "retrieval_count": 0,
        "half_life_days": 365.0,
        "strength": 1.0,
        "emotional_valence": "neutral",
        "schema_fit": 0.5,
        "tags": [],
        "source": "cli",
        "confidence": "verified",
        "pinned": False,
        "outcome_positive": 0,
        "outcome_negative": 0,
        "outcome_score": None,
        "updated_at": STAMP,
    }
    values.update(fields)
    return Memory(**values)


def plant(db_path: str, rows: list[Memory]) -> None:
    """Insert rows through hippod's store code, in one transaction (the daemon must be stopped)."""

    async def run() -> None:
        db, _ = await Database.open(db_path)
        try:
            async with db.transaction() as conn:
                for start in range(0, len(rows), PLANT_BATCH):
                    assert all(await remembers.insert_many(conn, rows[start : start + PLANT_BATCH]))
        finally:
            await db.close()

    asyncio.run(run())


def project(hippo: Hippo, name: str = "proj", config: dict[str, Any] | None = None) -> tuple[str, str]:
    """A project folder with an initialised store (and `config` as its config.json, if given):
    (folder, path of its hippo.db)."""
    folder = os.path.join(hippo.root, name)
    os.makedirs(os.path.join(folder, ".hippo"), exist_ok=True)
    if config is not None:
        with open(os.path.join(folder, ".hippo", "config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f)
    hippo.ok("init", cwd=folder)
    return folder, os.path.join(folder, ".hippo", "hippo.db")


def query(db_path: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows from a database, read-only."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def files(root: str) -> dict[str, bytes]:
    """Every file under a store folder with its bytes (WAL and shared-memory files left out)."""
    found: dict[str, bytes] = {}
    for path in sorted(Path(root).rglob("*")):
        if path.is_file() and not path.name.endswith(("-wal", "-shm")):
            found[str(path.relative_to(root))] = path.read_bytes()
    return found
