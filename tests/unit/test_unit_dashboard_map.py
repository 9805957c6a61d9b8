"""The memory map's figures (hippod/dashboard/strength_map.py): days to the dormant threshold and the
decay curves agree with the strength formula, the histograms count every memory once, and the table's
orders are what they say."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

from hippod.base import clock
from hippod.dashboard import strength_map as sm
from hippod.model.memory import Memory

NOW = datetime(2026, 6, 1, tzinfo=UTC)
CLOCK = sm.DecayBasis("clock", 1.0)


def _memory(days_idle: float = 0.0, **fields: Any) -> Memory:
    stamp = clock.iso(NOW - timedelta(days=days_idle))
    values: dict[str, Any] = {
        "id": "mem_000000000001",
        "tenant_id": "default",
        "content": "Staging deploys need the VPN",
        "layer": "episodic",
        "kind": "distilled",
        "created": stamp,
        "valid_from": stamp,
        "last_retrieved": stamp,
        "retrieval_count": 0,
        "half_life_days": 100.0,
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
    }
    values.update(fields)
    return Memory(**values)


def test_days_to_dormant_is_where_the_formula_crosses_the_threshold() -> None:
    # Unused, neutral, no marks: strength = 0.5 ** (days / half-life), which is 0.05 at
    # half-life * log2(20) days.
    fresh = sm.days_to_dormant(_memory(), NOW, CLOCK)
    assert fresh is not None and math.isclose(fresh, 100.0 * math.log2(20), abs_tol=0.02)
    # Time already idle counts: 100 days later, 100 days fewer to go.
    idle = sm.days_to_dormant(_memory(days_idle=100.0), NOW, CLOCK)
    assert idle is not None and math.isclose(idle, fresh - 100.0, abs_tol=0.02)
    # An error memory (valence x2) starts capped at 1.0 and lasts one half-life longer.
    error = sm.days_to_dormant(_memory(emotional_valence="negative"), NOW, CLOCK)
    assert error is not None and math.isclose(error, 100.0 * math.log2(40), abs_tol=0.02)
    assert sm.days_to_dormant(_memory(days_idle=1000.0), NOW, CLOCK) == 0.0  # the next sleep


def test_what_sleep_never_parks_never_fades() -> None:
    for fields, reason in (
        ({"pinned": True}, "pinned"),
        ({"superseded_by": "mem_000000000002"}, "superseded"),
        ({"source": "decision"}, "decision"),
        ({"layer": "buffer"}, "buffer"),
        ({"kind": "raw"}, "raw"),
    ):
        memory = _memory(days_idle=5000.0, **fields)
        assert sm.days_to_dormant(memory, NOW, CLOCK) is None
        assert sm.protected_reason(memory) == reason
    assert sm.protected_reason(_memory()) is None
    # A half-life so long that a century is not enough.
    assert sm.days_to_dormant(_memory(half_life_days=1e9), NOW, CLOCK) is None


def test_the_adaptive_basis_stretches_the_curve_by_the_gap_between_sleeps() -> None:
    clock_days = sm.days_to_dormant(_memory(), NOW, CLOCK)
    adaptive = sm.days_to_dormant(_memory(), NOW, sm.DecayBasis("adaptive", 3.0))
    assert clock_days is not None and adaptive is not None
    assert math.isclose(adaptive, 3 * clock_days, rel_tol=1e-3)


def test_a_curve_falls_to_the_threshold_and_stops() -> None:
    memory = _memory()
    until = sm.days_to_dormant(memory, NOW, CLOCK)
    assert until is not None
    grid = sm.curve_grid(until * 1.5)
    points = sm.curve(memory, NOW, grid, CLOCK)
    drawn = [p for p in points if p is not None]
    assert drawn[0] == 1.0 and drawn == sorted(drawn, reverse=True)
    assert drawn[-1] < sm.DORMANT_BELOW <= drawn[-2]
    assert points[len(drawn) :] == [None] * (len(points) - len(drawn))
    assert grid[len(drawn) - 2] <= until <= grid[len(drawn) - 1]


def _row(memory_id: str, layer: str, idle: float, retrievals: int, pinned: bool = False) -> tuple[Any, ...]:
    last = clock.iso(NOW - timedelta(days=idle))
    return (memory_id, layer, int(pinned), None, last, 100.0, 0, 0, retrievals, "neutral")


def test_a_reading_counts_each_memory_once_and_orders_the_table() -> None:
    rows = [
        _row("mem_a", "episodic", 10, 0),
        _row("mem_b", "episodic", 300, 0),
        _row("mem_c", "semantic", 50, 7),
        _row("mem_d", "episodic", 1000, 2),
        _row("mem_e", "semantic", 0, 0, pinned=True),
    ]
    reading = sm.read(rows, NOW, 1.0)
    by_layer = {f.layer: f for f in reading.figures}
    assert [f.layer for f in reading.figures] == ["episodic", "semantic"]
    assert by_layer["episodic"].count == 3 and by_layer["semantic"].count == 2
    assert sum(sum(f.histogram) for f in reading.figures) == 5
    assert by_layer["episodic"].fading == 1 and by_layer["semantic"].pinned == 1
    assert by_layer["semantic"].histogram[-1] == 1  # the pinned one, at 1.0

    def ids(sort: str, layer: str | None = None) -> list[str]:
        return [reading.ids[i] for i in reading.order(sort, layer)]

    assert ids("weakest") == ["mem_d", "mem_b", "mem_c", "mem_a", "mem_e"]
    assert ids("strongest") == ["mem_e", "mem_a", "mem_c", "mem_b", "mem_d"]
    assert ids("retrieved") == ["mem_c", "mem_d", "mem_a", "mem_b", "mem_e"]
    assert ids("recent") == ["mem_e", "mem_a", "mem_c", "mem_b", "mem_d"]
    assert ids("weakest", "semantic") == ["mem_c", "mem_e"]
    assert reading.order("weakest", None) is reading.order("weakest", None)  # sorted once
