"""The work-queue cards' rules (hippod/lifecycle/cards.py) and the scheduled reclaim over a real store."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hippod.base import clock
from hippod.daemon.app import new_state
from hippod.daemon.state import DaemonState
from hippod.jobs.card_reclaim import ACTOR, reclaim_all
from hippod.lifecycle import cards as rules
from hippod.store.sqlite import cards
from hippod.store.stores import StoreRegistry

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_the_lease_is_four_hours() -> None:
    assert rules.lease_until(T0) == T0 + timedelta(hours=4)


def test_complete_makes_done_only_on_success() -> None:
    assert [rules.completed_state(o) for o in rules.OUTCOMES] == ["done", "shelved", "shelved"]


def test_a_new_card_waits_while_a_dependency_is_unfinished() -> None:
    assert (rules.initial_state(0), rules.initial_state(2)) == ("ready", "waiting")


def test_claim_moves_ready_or_blocked_only() -> None:
    assert rules.MOVES["claim"] == (("ready", "blocked"), "running")
    assert rules.MOVES["reclaim"] == (("running",), "ready")
    assert rules.MOVES["complete"] == (("review",), "done")


@pytest.mark.parametrize(
    ("edges", "card", "deps", "cycle"),
    [
        ([], 1, [1], [1, 1]),  # a card on itself
        ([(2, 1)], 1, [2], [1, 2, 1]),
        ([(2, 3), (3, 1)], 1, [2], [1, 2, 3, 1]),
        ([(2, 3), (3, 4)], 1, [2], None),  # a chain that never comes back
        ([(2, 3), (4, 1)], 1, [2, 3], None),  # 4 depends on 1: no path from 2 or 3 to 1
        ([(2, 3), (3, 2)], 1, [4], None),  # an old loop elsewhere is not this card's
    ],
)
def test_cycle_through(
    edges: list[tuple[int, int]], card: int, deps: list[int], cycle: list[int] | None
) -> None:
    assert rules.cycle_through(edges, card, deps) == cycle


# --- the scheduled reclaim, in-process over a real global store ------------------------------------


@pytest.fixture
def daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DaemonState:
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))
    return new_state(StoreRegistry(), str(tmp_path / "d.sock"), str(tmp_path / "hippod.log"), 1.0)


async def _claimed(daemon: DaemonState, title: str, at: datetime, tenant: str = "default") -> int:
    """A card claimed at `at` (its lease ends four hours later)."""
    store = await daemon.registry.open(daemon.registry.global_root)
    now = clock.iso(at)
    async with store.db.transaction() as conn:
        card = await cards.insert(conn, tenant, title, None, None, None, "running", now)
        await cards.start_run(conn, card, "agent", now, clock.iso(rules.lease_until(at)))
    return card


async def _state(daemon: DaemonState, card: int, tenant: str = "default") -> tuple[str, Any]:
    store = await daemon.registry.open(daemon.registry.global_root)
    found = await cards.get(store.db.reader, tenant, card)
    live = await cards.live_run(store.db.reader, card)
    assert found is not None and live is not None
    return found.status, live.end_reason


async def test_reclaim_all_frees_expired_leases_in_every_tenant(
    daemon: DaemonState, fake_clock: Callable[[Any], None]
) -> None:
    old = await _claimed(daemon, "claimed five hours ago", T0 - timedelta(hours=5))
    other = await _claimed(daemon, "another tenant's", T0 - timedelta(hours=5), tenant="team-b")
    fresh = await _claimed(daemon, "claimed an hour ago", T0 - timedelta(hours=1))
    fake_clock(T0)
    try:
        assert await reclaim_all(daemon) == 2
        assert await _state(daemon, old) == ("ready", "expired")
        assert await _state(daemon, other, "team-b") == ("ready", "expired")
        assert await _state(daemon, fresh) == ("running", None)
        assert await reclaim_all(daemon) == 0  # nothing twice
        store = await daemon.registry.open(daemon.registry.global_root)
        rows = await store.db.reader.execute_fetchall(
            "SELECT actor, target_id FROM audit_log WHERE op = 'card_reclaim' ORDER BY target_id"
        )
        assert [tuple(r) for r in rows] == [(ACTOR, f"card:{old}"), (ACTOR, f"card:{other}")]
    finally:
        await daemon.registry.close_all()
