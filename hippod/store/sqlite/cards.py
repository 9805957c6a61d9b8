"""SQL for the work-queue cards (integrations.md §14): cards, their dependencies, runs and comments."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import aiosqlite

from hippoctl.protocol.messages_cards import STATES

_CARD_COLS = "id, title, repo, contract, budget, status, created_at, updated_at, tenant_id"
_RUN_COLS = "card_id, run, runtime, started_at, lease_expires_at, ended_at, end_reason"


@dataclass(slots=True)
class Card:
    id: int
    title: str
    repo: str | None
    contract: str | None
    budget: int | None
    status: str
    created_at: str
    updated_at: str
    tenant: str


@dataclass(slots=True)
class Run:
    card_id: int
    run: int
    runtime: str
    started_at: str
    lease_expires_at: str
    ended_at: str | None
    end_reason: str | None


@dataclass(slots=True)
class Comment:
    ts: str
    author: str
    body: str


async def insert(
    conn: aiosqlite.Connection,
    tenant: str,
    title: str,
    repo: str | None,
    contract: str | None,
    budget: int | None,
    status: str,
    now: str,
) -> int:
    """A new card; returns its id."""
    cursor = await conn.execute(
        "INSERT INTO cards (tenant_id, title, repo, contract, budget, status, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (tenant, title, repo, contract, budget, status, now, now),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


async def get(conn: aiosqlite.Connection, tenant: str, card_id: int) -> Card | None:
    rows = await conn.execute_fetchall(
        f"SELECT {_CARD_COLS} FROM cards WHERE id = ? AND tenant_id = ?", (card_id, tenant)
    )
    return Card(*next(iter(rows))) if rows else None


async def many(conn: aiosqlite.Connection, tenant: str, ids: Iterable[int]) -> dict[int, Card]:
    """The tenant's cards among `ids`, by id (an id missing from the result is no card of the tenant)."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    marks = ", ".join("?" * len(wanted))
    rows = await conn.execute_fetchall(
        f"SELECT {_CARD_COLS} FROM cards WHERE tenant_id = ? AND id IN ({marks})", (tenant, *wanted)
    )
    return {int(r[0]): Card(*r) for r in rows}


async def listed(
    conn: aiosqlite.Connection, tenant: str, status: str | None = None, limit: int | None = None
) -> list[Card]:
    """The tenant's cards, newest-updated first, optionally of one status."""
    where, params = "tenant_id = ?", [tenant]
    if status is not None:
        where, params = where + " AND status = ?", [tenant, status]
    sql = f"SELECT {_CARD_COLS} FROM cards WHERE {where} ORDER BY updated_at DESC, id DESC"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [Card(*r) for r in await conn.execute_fetchall(sql, params)]


async def counts(conn: aiosqlite.Connection, tenant: str) -> dict[str, int]:
    """How many of the tenant's cards are in each state (every state present, zero included)."""
    rows = await conn.execute_fetchall(
        "SELECT status, COUNT(*) FROM cards WHERE tenant_id = ? GROUP BY status", (tenant,)
    )
    found = {str(r[0]): int(r[1]) for r in rows}
    return {s: found.get(s, 0) for s in STATES}


async def move(
    conn: aiosqlite.Connection, card_id: int, to: str, now: str, *, only_from: tuple[str, ...]
) -> bool:
    """Move a card to `to` if it is in one of `only_from` now; False when it was not (a racing
    move got there first). The condition is in the UPDATE so the row's state decides, not a read."""
    marks = ", ".join("?" * len(only_from))
    cursor = await conn.execute(
        f"UPDATE cards SET status = ?, updated_at = ? WHERE id = ? AND status IN ({marks})",
        (to, now, card_id, *only_from),
    )
    return cursor.rowcount == 1


async def touch(conn: aiosqlite.Connection, card_id: int, now: str) -> None:
    await conn.execute("UPDATE cards SET updated_at = ? WHERE id = ?", (now, card_id))


# --- dependencies ---------------------------------------------------------------------------------


async def add_deps(conn: aiosqlite.Connection, card_id: int, depends_on: Iterable[int]) -> None:
    await conn.executemany(
        "INSERT OR IGNORE INTO card_deps (card_id, depends_on) VALUES (?, ?)",
        [(card_id, d) for d in depends_on],
    )


async def deps(conn: aiosqlite.Connection, card_id: int) -> list[int]:
    """The cards this one depends on."""
    rows = await conn.execute_fetchall(
        "SELECT depends_on FROM card_deps WHERE card_id = ? ORDER BY depends_on", (card_id,)
    )
    return [int(r[0]) for r in rows]


async def dependents(conn: aiosqlite.Connection, card_id: int) -> list[int]:
    """The cards that depend on this one."""
    rows = await conn.execute_fetchall(
        "SELECT card_id FROM card_deps WHERE depends_on = ? ORDER BY card_id", (card_id,)
    )
    return [int(r[0]) for r in rows]


async def edges(conn: aiosqlite.Connection, tenant: str) -> list[tuple[int, int]]:
    """Every (card, depends_on) pair of the tenant's cards, for the cycle check."""
    rows = await conn.execute_fetchall(
        "SELECT d.card_id, d.depends_on FROM card_deps d JOIN cards c ON c.id = d.card_id "
        "WHERE c.tenant_id = ?",
        (tenant,),
    )
    return [(int(r[0]), int(r[1])) for r in rows]


async def unfinished_deps(conn: aiosqlite.Connection, card_id: int) -> int:
    """How many of the card's dependencies are not done."""
    rows = await conn.execute_fetchall(
        "SELECT COUNT(*) FROM card_deps d JOIN cards p ON p.id = d.depends_on "
        "WHERE d.card_id = ? AND p.status != 'done'",
        (card_id,),
    )
    return int(next(iter(rows))[0])


# --- runs -----------------------------------------------------------------------------------------


async def runs(conn: aiosqlite.Connection, card_id: int) -> list[Run]:
    """The card's runs, newest first; the first is the live run."""
    rows = await conn.execute_fetchall(
        f"SELECT {_RUN_COLS} FROM card_runs WHERE card_id = ? ORDER BY run DESC", (card_id,)
    )
    return [Run(*r) for r in rows]


async def live_run(conn: aiosqlite.Connection, card_id: int) -> Run | None:
    rows = await conn.execute_fetchall(
        f"SELECT {_RUN_COLS} FROM card_runs WHERE card_id = ? ORDER BY run DESC LIMIT 1", (card_id,)
    )
    return Run(*next(iter(rows))) if rows else None


async def start_run(
    conn: aiosqlite.Connection, card_id: int, runtime: str, now: str, lease_expires_at: str
) -> int:
    """A new run of the card; returns its number (1 for the first claim)."""
    rows = await conn.execute_fetchall(
        "SELECT COALESCE(MAX(run), 0) + 1 FROM card_runs WHERE card_id = ?", (card_id,)
    )
    run = int(next(iter(rows))[0])
    await conn.execute(
        "INSERT INTO card_runs (card_id, run, runtime, started_at, lease_expires_at) VALUES (?, ?, ?, ?, ?)",
        (card_id, run, runtime, now, lease_expires_at),
    )
    return run


async def extend_lease(conn: aiosqlite.Connection, card_id: int, run: int, lease_expires_at: str) -> None:
    await conn.execute(
        "UPDATE card_runs SET lease_expires_at = ? WHERE card_id = ? AND run = ?",
        (lease_expires_at, card_id, run),
    )


async def end_run(conn: aiosqlite.Connection, card_id: int, run: int, now: str, reason: str) -> None:
    await conn.execute(
        "UPDATE card_runs SET ended_at = ?, end_reason = ? "
        "WHERE card_id = ? AND run = ? AND ended_at IS NULL",
        (now, reason, card_id, run),
    )


async def expired(conn: aiosqlite.Connection, tenant: str | None, now: str) -> list[tuple[int, int, str]]:
    """(card, run, tenant) of every running card whose live run's lease has passed; every tenant when None."""
    sql = (
        "SELECT c.id, r.run, c.tenant_id FROM cards c JOIN card_runs r ON r.card_id = c.id "
        "WHERE c.status = 'running' AND r.ended_at IS NULL AND r.lease_expires_at <= ? "
        "AND r.run = (SELECT MAX(run) FROM card_runs WHERE card_id = c.id)"
    )
    params: list[str] = [now]
    if tenant is not None:
        sql += " AND c.tenant_id = ?"
        params.append(tenant)
    rows = await conn.execute_fetchall(sql + " ORDER BY c.id", params)
    return [(int(r[0]), int(r[1]), str(r[2])) for r in rows]


# --- comments -------------------------------------------------------------------------------------


async def add_comment(conn: aiosqlite.Connection, card_id: int, ts: str, author: str, body: str) -> None:
    await conn.execute(
        "INSERT INTO card_comments (card_id, ts, author, body) VALUES (?, ?, ?, ?)",
        (card_id, ts, author, body),
    )


async def comments(conn: aiosqlite.Connection, card_id: int) -> list[Comment]:
    """The card's comments, oldest first."""
    rows = await conn.execute_fetchall(
        "SELECT ts, author, body FROM card_comments WHERE card_id = ? ORDER BY id", (card_id,)
    )
    return [Comment(*r) for r in rows]
