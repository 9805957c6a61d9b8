"""Shared fixtures for the unit tests: the spec's vectors, a Memory factory, a clean clock, a database,
an old store."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e.sleep_support import make

from hippod.base import clock
from hippod.model.memory import Memory
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import migrations

# The spec's expected values (its vectors.json), copied in as they are: they are facts.
VECTORS_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "spec" / "vectors.json"


# Fixture name -> the vectors.json section whose cases it is parametrized over.
VECTOR_FIXTURES = {"strength_case": "strength", "reward_case": "reward_factor", "tokenize_case": "tokenize"}


def load_vectors() -> dict[str, Any]:
    """The expected values from the spec."""
    with open(VECTORS_PATH, encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize a test over every case of a vectors.json section it asks for by fixture name."""
    for name, section in VECTOR_FIXTURES.items():
        if name in metafunc.fixturenames:
            cases = load_vectors()[section]
            assert cases, f"vectors.json has no {section} cases"
            metafunc.parametrize(name, cases, ids=[f"{section}-{i}" for i in range(len(cases))])


@pytest.fixture
def make_memory() -> Callable[..., Memory]:
    """Build a Memory with the defaults of memory-model.md §6; keyword arguments override fields."""
    counter = iter(range(1, 1_000_000))

    def factory(content: str = "a memory", **overrides: Any) -> Memory:
        return make(content, **{"id": f"mem_{next(counter):012x}", **overrides})

    return factory


@pytest.fixture
def fake_clock() -> Iterator[Callable[[Any], None]]:
    """Fix hippod.base.clock's "now" for one test and always release it afterwards."""
    yield clock.set_fake_now
    clock.set_fake_now(None)


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[dbmod.Database]:
    """A fresh store database in the test's folder, closed afterwards."""
    db, _ = await dbmod.Database.open(str(tmp_path / "hippo.db"))
    try:
        yield db
    finally:
        await db.close()


@pytest.fixture
def old_store(tmp_path: Path) -> Iterator[Callable[[int], sqlite3.Connection]]:
    """Opens a store database (autocommit, as migrate wants it) brought up to schema `version` only,
    for a test of the migrations after it; closed afterwards."""
    opened: list[sqlite3.Connection] = []

    def at(version: int) -> sqlite3.Connection:
        conn = sqlite3.connect(tmp_path / "hippo.db", isolation_level=None)
        opened.append(conn)
        conn.execute("PRAGMA application_id = 1213223748")
        for number, migration in enumerate(migrations.MIGRATIONS[:version], start=1):
            migration(conn)
            conn.execute(f"PRAGMA user_version = {number}")
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(version),))
        return conn

    try:
        yield at
    finally:
        for conn in opened:
            conn.close()
