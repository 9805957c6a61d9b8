"""The memory map's figures, from hippod's own strength math (hippod/model/strength.py and the
decay pass of sleep): per-layer counts and strength histograms, the orders of the table, and each
memory's decay curve down to the dormant threshold. Pure functions of values."""

from __future__ import annotations

import sys
import threading
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from hippod.base.clock import days_between
from hippod.model import decay
from hippod.model import strength as st
from hippod.model.memory import Memory

BINS = 20  # strength histogram: twenty bins of 0.05, the first of them below the dormant threshold
DORMANT_BELOW = decay.FADED_BELOW
HORIZON_DAYS = 36_500.0  # past a hundred years a memory is shown as not fading
CURVE_POINTS = 80
SORTS = ("weakest", "strongest", "retrieved", "recent")
KEPT_ORDERS = 8  # table orders a Reading keeps (sort × layer filter)
LAYER_ORDER = ("buffer", "episodic", "semantic", "trace")


@dataclass
class LayerFigures:
    """One layer of the map: how many, how strong, and how many near or past the threshold."""

    layer: str
    count: int = 0
    pinned: int = 0
    superseded: int = 0
    at_risk: int = 0  # below status's at-risk line (0.2)
    fading: int = 0  # below the dormant threshold: the next sleep parks them unless protected
    mean: float = 0.0
    histogram: list[int] = field(default_factory=lambda: [0] * BINS)


def layer_figures(rows: Sequence[tuple[Any, ...]], strengths: Sequence[float]) -> list[LayerFigures]:
    """Per-layer figures of reports.status_rows rows and their live strengths, the usual layers first."""
    layers: dict[str, LayerFigures] = {}
    for row, value in zip(rows, strengths, strict=True):
        figures = layers.get(row[1])
        if figures is None:
            figures = layers[row[1]] = LayerFigures(row[1])
        figures.count += 1
        figures.pinned += bool(row[2])
        figures.superseded += row[3] is not None
        figures.at_risk += value < st.AT_RISK_BELOW
        figures.fading += value < DORMANT_BELOW
        figures.mean += value
        figures.histogram[min(BINS - 1, int(value * BINS))] += 1
    for figures in layers.values():
        figures.mean = round(figures.mean / figures.count, 4)
    rank = {name: i for i, name in enumerate(LAYER_ORDER)}
    return sorted(layers.values(), key=lambda f: (rank.get(f.layer, len(rank)), f.layer))


@dataclass
class Reading:
    """One reading of a store's live strengths, which the dashboard keeps while the store is unchanged:
    the layers' figures, a few compact columns (never the rows themselves), and each table order asked
    for so far."""

    figures: list[LayerFigures]
    ids: list[str]
    layers: list[str]
    strengths: array[float]
    retrievals: array[int]
    idle_days: array[float]  # days since last retrieved, at the reading's time
    orders: dict[tuple[str, str | None], array[int]] = field(default_factory=dict)
    # Orders are made in worker threads, two requests' at once: one at a time touches `orders`.
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def order(self, sort: str, layer: str | None) -> array[int]:
        """Indexes in the table's order (filtered to one layer when given), sorted once per reading."""
        key = (sort, layer)
        with self._lock:
            found = self.orders.get(key)
            if found is None:
                if len(self.orders) >= KEPT_ORDERS:
                    self.orders.pop(next(iter(self.orders)))
                found = self.orders[key] = array("l", self._sorted(sort, layer))
            return found

    def _sorted(self, sort: str, layer: str | None) -> list[int]:
        ids, keep = self.ids, [i for i in range(len(self.ids)) if layer is None or self.layers[i] == layer]
        column: Sequence[float] = {
            "strongest": [-v for v in self.strengths],
            "retrieved": [-float(v) for v in self.retrievals],
            "recent": self.idle_days,
        }.get(sort, self.strengths)
        keep.sort(key=lambda i: (column[i], ids[i]))
        return keep


def read(rows: Sequence[tuple[Any, ...]], now: datetime, loss_aversion: float) -> Reading:
    """A Reading of reports.status_rows rows at `now`. CPU work for a large store: off the loop."""
    strengths = st.live_strengths(rows, now, loss_aversion)
    return Reading(
        figures=layer_figures(rows, strengths),
        ids=[row[0] for row in rows],
        layers=[sys.intern(row[1]) for row in rows],
        strengths=array("d", strengths),
        retrievals=array("l", (row[8] for row in rows)),
        idle_days=array("d", (days_between(row[4], now) for row in rows)),
    )


@dataclass(frozen=True, slots=True)
class DecayBasis:
    """How sleep judges fading in this store: its decayBasis and the mean gap between its sleeps."""

    basis: str
    mean_gap_days: float
    loss_aversion: float = 1.0


def sleep_strength_after(memory: Memory, now: datetime, days: float, basis: DecayBasis) -> float:
    """The strength sleep's decay pass would see `days` from now if the memory is not used meanwhile."""
    return decay.sleep_strength(
        memory, now + timedelta(days=days), basis.basis, basis.mean_gap_days, basis.loss_aversion
    )


def protected_reason(memory: Memory) -> str | None:
    """Why sleep never parks this memory, or None when it can fade."""
    return decay.protection(memory)


def days_to_dormant(memory: Memory, now: datetime, basis: DecayBasis) -> float | None:
    """Days from now until sleep would find it below the threshold (0: the next sleep); None when it
    never fades (protected) or not within a hundred years."""
    if decay.is_protected(memory):
        return None
    if sleep_strength_after(memory, now, 0.0, basis) < DORMANT_BELOW:
        return 0.0
    low, high = 0.0, 1.0
    while sleep_strength_after(memory, now, high, basis) >= DORMANT_BELOW:
        if high >= HORIZON_DAYS:
            return None
        low, high = high, min(HORIZON_DAYS, high * 2)
    # Strength only falls with time: bisect to well under a day.
    while high - low > 0.01:
        middle = (low + high) / 2
        if sleep_strength_after(memory, now, middle, basis) >= DORMANT_BELOW:
            low = middle
        else:
            high = middle
    return high


def curve_grid(horizon_days: float) -> list[float]:
    """The shared x axis of the decay chart: days from now, CURVE_POINTS steps up to the horizon."""
    horizon = max(1.0, horizon_days)
    return [round(horizon * i / (CURVE_POINTS - 1), 3) for i in range(CURVE_POINTS)]


def curve(memory: Memory, now: datetime, grid: Sequence[float], basis: DecayBasis) -> list[float | None]:
    """Strength over the grid, ending at the first point below the threshold (None after it)."""
    points: list[float | None] = []
    below = False
    for days in grid:
        if below:
            points.append(None)
            continue
        value = sleep_strength_after(memory, now, days, basis)
        points.append(round(value, 4))
        below = value < DORMANT_BELOW
    return points
