"""Fixtures for the team store: its database on the test server, a tenant of each test's own."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from e2e.conftest import hippo  # noqa: F401  (the e2e tests' isolated instance, for team servers)

from hippod.store.db import Database
from hippod.team.pg import TeamDatabase


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
