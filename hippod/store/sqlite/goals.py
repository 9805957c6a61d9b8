"""SQL for the goal stack: a tenant's goals in a store, on the store's own stack (session '') or on
a session's, and the memories recalled under each goal while it was on the stack.

Every read filters by tenant. A popped goal stays as a row (status `popped`, its outcome) for
`goal list --all`; what was recalled under it goes when it is popped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite

STORE_STACK = ""  # the session value of a goal on the store's own stack

_COLUMNS = "id, session, tag, status, outcome, pushed_at, popped_at"


@dataclass(frozen=True, slots=True)
class Goal:
    id: int
    session: str  # STORE_STACK, or the session key whose stack it is on
    tag: str
    status: str  # active | popped
    outcome: str | None  # good | bad | none, once popped with --outcome
    pushed_at: str
    popped_at: str | None


def stack_session(session_key: str) -> str | None:
    """The session whose stack a request sees besides the store's: its session key, None outside
    any session (the key `-`)."""
    return None if session_key in ("", "-") else session_key


def _goal(row: Sequence[Any]) -> Goal:
    return Goal(*row)


def _stacks(session: str | None) -> tuple[str, list[str]]:
    """The WHERE part that picks the store's stack, and the session's when there is one."""
    if session is None:
        return "session = ?", [STORE_STACK]
    return "session IN (?, ?)", [STORE_STACK, session]


async def on_stack(conn: aiosqlite.Connection, tenant: str, session: str | None) -> list[Goal]:
    """The active goals of the store's stack and of `session`'s (None: the store's alone), in the
    order they were pushed (the top of each stack last)."""
    where, params = _stacks(session)
    rows = await conn.execute_fetchall(
        f"SELECT {_COLUMNS} FROM goals WHERE tenant_id = ? AND status = 'active' AND {where} ORDER BY id",
        (tenant, *params),
    )
    return [_goal(r) for r in rows]


async def any_active(conn: aiosqlite.Connection) -> bool:
    """Whether any stack of any tenant holds an active goal."""
    rows = await conn.execute_fetchall("SELECT 1 FROM goals WHERE status = 'active' LIMIT 1")
    return bool(rows)


async def every(conn: aiosqlite.Connection, tenant: str, session: str | None) -> list[Goal]:
    """Every goal of the store's stack and `session`'s, popped ones too, in the order they were pushed."""
    where, params = _stacks(session)
    rows = await conn.execute_fetchall(
        f"SELECT {_COLUMNS} FROM goals WHERE tenant_id = ? AND {where} ORDER BY id", (tenant, *params)
    )
    return [_goal(r) for r in rows]


async def push(conn: aiosqlite.Connection, tenant: str, session: str, tag: str, now: str) -> Goal:
    """Put a goal on top of a stack (`session`: STORE_STACK or a session key)."""
    cursor = await conn.execute(
        "INSERT INTO goals (tenant_id, session, tag, pushed_at) VALUES (?, ?, ?, ?)",
        (tenant, session, tag, now),
    )
    return Goal(int(cursor.lastrowid or 0), session, tag, "active", None, now, None)


async def pop(conn: aiosqlite.Connection, goal: Goal, outcome: str | None, now: str) -> list[str]:
    """Take a goal off its stack, with its outcome; returns the ids of the memories recalled under
    it, whose record goes with it."""
    rows = await conn.execute_fetchall(
        "SELECT memory_id FROM goal_recalls WHERE goal_id = ? ORDER BY recalled_at, memory_id", (goal.id,)
    )
    await conn.execute("DELETE FROM goal_recalls WHERE goal_id = ?", (goal.id,))
    await conn.execute(
        "UPDATE goals SET status = 'popped', outcome = ?, popped_at = ? WHERE id = ?", (outcome, now, goal.id)
    )
    return [str(r[0]) for r in rows]


async def record_recalls(conn: aiosqlite.Connection, pairs: Iterable[tuple[int, str]], now: str) -> None:
    """Note that each (goal id, memory id) was recalled while the goal lifted it; the first time counts."""
    await conn.executemany(
        "INSERT OR IGNORE INTO goal_recalls (goal_id, memory_id, recalled_at) VALUES (?, ?, ?)",
        [(goal_id, memory_id, now) for goal_id, memory_id in pairs],
    )


async def recalled_count(conn: aiosqlite.Connection, goal_ids: Sequence[int]) -> dict[int, int]:
    """goal id -> how many memories were recalled under it so far."""
    if not goal_ids:
        return {}
    marks = ", ".join("?" * len(goal_ids))
    rows = await conn.execute_fetchall(
        f"SELECT goal_id, COUNT(*) FROM goal_recalls WHERE goal_id IN ({marks}) GROUP BY goal_id",
        tuple(goal_ids),
    )
    return {int(r[0]): int(r[1]) for r in rows}
