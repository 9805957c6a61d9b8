"""The team store: a `Store` whose rows live in the team's PostgreSQL database.

A team server (`hippod serve --team`) serves it as its only store, to every tenant. Its folder holds
no memories, only the server's `config.json` (recall's settings); there are no mirror files, no
vectors and no token ledger.
"""

from __future__ import annotations

import os

import psycopg

from hippod.base.errors import HippoError
from hippod.embed.service import EmbedService
from hippod.store.backend import Backend
from hippod.store.postgres import (
    agent_links,
    api_keys,
    auditlog,
    conflicts,
    dormant,
    memories,
    rejections,
    reports,
    sleep,
)
from hippod.store.postgres.migrations import MIGRATIONS
from hippod.store.postgres.pg import TeamDatabase, describe
from hippod.store.store import Store

# The team store's row modules (store/backend.py).
TEAM = Backend(memories, api_keys, rejections, conflicts, dormant, sleep, auditlog, reports, agent_links)
# Connections each server process keeps to the database (a pooler in front may share them further).
POOL_MAX = 10
# Seconds a request waits for a connection (the database restarting) before answering team_unreachable.
WAIT = 30.0


class TeamStore(Store):
    """The team's store: its rows in PostgreSQL, served to every tenant; what only a team server
    does with them (a member's marks, the changes a member's copy pulls) takes one."""

    db: TeamDatabase

    def __init__(self, root: str, db: TeamDatabase, embedder: EmbedService) -> None:
        super().__init__(root, "global", db, len(MIGRATIONS), True, embedder, backend=TEAM)


async def open_team_store(
    dsn: str, root: str, embedder: EmbedService, *, pool_max: int = POOL_MAX, wait: float = WAIT
) -> TeamStore:
    """Migrate the team's database, open a pool to it, and wrap it as a store whose folder is `root`;
    a request waits `wait` seconds at most for a connection."""
    os.makedirs(root, mode=0o700, exist_ok=True)
    try:
        db = await TeamDatabase.open(dsn, min_size=1, max_size=pool_max, timeout=wait)
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise HippoError(
            "team_unreachable", f"the team database {describe(dsn)} cannot be used: {reason}"
        ) from None
    return TeamStore(root, db, embedder)
