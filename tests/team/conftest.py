"""Fixtures for the team store: its database on the test server, a tenant of each test's own, and a
team server's instance."""

from __future__ import annotations

import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from e2e.conftest import hippo  # noqa: F401  (the e2e tests' isolated instance, for team servers)
from e2e.harness import Hippo

from hippod.store.postgres.pg import TeamDatabase
from hippod.store.sqlite.db import Database


@pytest.fixture
async def team_db(pg_dsn: str) -> AsyncIterator[TeamDatabase]:
    """The worker's team database, migrated, with a small pool; closed afterwards."""
    db = await TeamDatabase.open(pg_dsn, min_size=1, max_size=4)
    try:
        yield db
    finally:
        await db.close()


@pytest.fixture
def tenant() -> str:
    """A tenant no other test uses: the tests share one database, and tenants never see each other."""
    return "t_" + secrets.token_hex(6)


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    """A fresh SQLite store database in the test's folder, closed afterwards."""
    db, _ = await Database.open(str(tmp_path / "hippo.db"))
    try:
        yield db
    finally:
        await db.close()


@pytest.fixture
def server(pg_fresh_dsn: str) -> Iterator[Hippo]:
    """A team server's instance (not started): its own folders, beside the laptop's `hippo`."""
    instance = Hippo(tempfile.mkdtemp(prefix="hs", dir="/tmp"))
    try:
        yield instance
    finally:
        instance.cleanup()
        shutil.rmtree(instance.root, ignore_errors=True)
