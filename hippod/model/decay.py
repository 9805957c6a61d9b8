"""Sleep's decay pass, legacy rebase and replay sampling (sleep.md §3-§4). Pure functions."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from hippod.base.clock import days_between, parse_iso
from hippod.model import strength as st
from hippod.model.memory import Memory
from hippod.model.secrets import looks_secret

FADED_BELOW = 0.05
# How far a survivor's strength cache may lag its live value before a sleep writes it. Readers compute
# strength live (recall, the HTTP read, the dashboard, exports; inspect shows both), so the cache is
# a record, and a daily sleep writes the rows decay moved that far, not every row of the store.
CACHE_DRIFT = 0.01
RUNS_FOR_AVERAGE = 20
VALENCE_WEIGHT = {"neutral": 1.0, "positive": 1.3, "negative": 1.5, "critical": 2.0}


def protection(memory: Memory) -> str | None:
    """Why no sleep phase removes this row (sleep.md §3.1), or None when it can fade: pinned,
    superseded, a decision, the buffer layer, kept by a compaction, or raw (or archived raw)."""
    if memory.pinned:
        return "pinned"
    if memory.superseded_by is not None:
        return "superseded"
    if memory.source == "decision":
        return "decision"
    if memory.layer == "buffer":
        return "buffer"
    if memory.compaction_id is not None:
        return "kept"
    if memory.kind in ("raw", "archived"):
        return memory.kind
    return None


def is_protected(memory: Memory) -> bool:
    """Rows no sleep phase removes (`protection`)."""
    return protection(memory) is not None


def net_negative(memory: Memory) -> bool:
    return memory.outcome_negative > memory.outcome_positive


def average_gap_days(run_timestamps: Sequence[str]) -> float:
    """Mean gap in days between the newest <= 20 sleeps; 1 with fewer than 2 (memory-model.md §7)."""
    newest = sorted((parse_iso(t) for t in run_timestamps), reverse=True)[:RUNS_FOR_AVERAGE]
    if len(newest) < 2:
        return 1.0
    span = (newest[0] - newest[-1]).total_seconds() / 86400.0
    return span / (len(newest) - 1)


def sleep_strength(
    memory: Memory, now: datetime, basis: str, avg_gap: float, loss_aversion: float = 1.0
) -> float:
    """Strength for sleep's removal test, with the store's decayBasis (memory-model.md §7).

    The clock formula (strength.strength) with the basis folded in: `adaptive` stretches the
    half-life by the mean gap between sleeps, `session` counts days in units of that gap.
    """
    scale, unit = basis_scaling(basis, avg_gap)
    return memory.strength_at(now, loss_aversion, half_life_scale=scale, day_unit=unit).strength


def basis_scaling(basis: str, avg_gap: float) -> tuple[float, float]:
    """(half-life scale, day unit) of a decayBasis: `adaptive` stretches the half-life by the mean
    gap between sleeps (when above a day), `session` counts days in units of that gap."""
    scale = avg_gap if basis == "adaptive" and avg_gap > 1 else 1.0
    unit = avg_gap if basis == "session" and avg_gap > 0 else 1.0
    return scale, unit


@dataclass(slots=True)
class DecayResult:
    survivors: list[Memory]
    dormant: list[tuple[Memory, float]]  # (memory, sleep-basis strength)
    secret_deleted: list[tuple[Memory, float]]
    deleted: list[tuple[Memory, float]]
    refreshed: list[Memory]  # survivors whose cache lags by CACHE_DRIFT or more (updated in place)


def decay_pass(
    rows: Sequence[Memory],
    now: datetime,
    *,
    basis: str,
    avg_gap: float,
    dormant_enabled: bool,
    loss_aversion: float = 1.0,
) -> DecayResult:
    """Split rows into survivors and the faded (dormant, secret-deleted or deleted); list the
    survivors whose strength cache lags by CACHE_DRIFT or more, for the store to write."""
    result = DecayResult([], [], [], [], [])
    # What sleep_strength and strength_at compute, the same operations on the same values, without
    # their keyword calls and parts objects: a sleep runs this over every memory of the store. Where
    # the basis scales nothing, the removal test's strength is the live one.
    scale, unit = basis_scaling(basis, avg_gap)
    scaled = scale != 1.0 or unit != 1.0
    for memory in rows:
        days = days_between(memory.last_retrieved, now)
        pos, neg, count = memory.outcome_positive, memory.outcome_negative, memory.retrieval_count
        valence, pinned = memory.emotional_valence, memory.pinned
        live = st.live_strength(days, memory.half_life_days, pos, neg, count, valence, pinned, loss_aversion)
        if not is_protected(memory):
            value = live
            if scaled:
                stretched, counted = memory.half_life_days * scale, days / unit
                value = st.live_strength(counted, stretched, pos, neg, count, valence, pinned, loss_aversion)
            if value < FADED_BELOW:
                if looks_secret(memory.content, memory.tags):
                    result.secret_deleted.append((memory, value))
                elif dormant_enabled:
                    result.dormant.append((memory, value))
                else:
                    result.deleted.append((memory, value))
                continue
        # The plan goes on with the live value wherever it moved at four decimals; the store is
        # written only where the cache lags by CACHE_DRIFT or more: a daily sleep writes the rows decay
        # moved that far.
        if round(live, 4) != round(memory.strength, 4):
            if abs(live - memory.strength) >= CACHE_DRIFT:
                result.refreshed.append(memory)
            memory.strength = live
        result.survivors.append(memory)
    return result


def rebase(memory: Memory, default_half_life: float) -> float:
    """The one-time legacy half-life (sleep.md §3.4)."""
    extra = 2.0 * memory.retrieval_count
    if memory.source == "decision":
        return default_half_life + extra
    factor = st.ERROR_HALF_LIFE_FACTOR if "error" in memory.tags else 1.0
    return default_half_life * factor + extra


def replay_weight(memory: Memory, now: datetime, current_strength: float) -> float:
    """Sampling weight of a replay candidate (sleep.md §4)."""
    pos, neg = memory.outcome_positive, memory.outcome_negative
    outcome = max(0.1, 1 + 0.5 * pos + 0.25 * (pos - neg))
    valence = VALENCE_WEIGHT.get(memory.emotional_valence, 1.0)
    hours = days_between(memory.last_retrieved, now) * 24.0
    return (
        outcome
        * valence
        / (1 + memory.retrieval_count)
        * (1 + 0.1 * math.log(1 + hours))
        * max(0.1, current_strength)
    )


def replay_eligible(memory: Memory) -> bool:
    return not (
        memory.pinned
        or memory.confidence == "stale"
        or net_negative(memory)
        or memory.superseded_by is not None
        or memory.layer == "buffer"
        or memory.kind == "archived"
    )


def replay_sample(survivors: Sequence[Memory], now: datetime, count: int) -> list[Memory]:
    """Up to `count` survivors drawn by weight without replacement, PRNG seeded with now's epoch second."""
    pool = [m for m in survivors if replay_eligible(m)]
    return [pool[i] for i in replay_picks([replay_weight(m, now, m.strength) for m in pool], now, count)]


def replay_picks(weights: Sequence[float], now: datetime, count: int) -> list[int]:
    """Up to `count` positions of the eligible pool drawn by weight without replacement (sleep.md §4)."""
    left, positions = list(weights), list(range(len(weights)))
    rng = random.Random(int(now.timestamp()))
    chosen: list[int] = []
    while positions and len(chosen) < count:
        total = sum(left)
        target = rng.random() * total
        pick = len(positions) - 1
        running = 0.0
        for index, weight in enumerate(left):
            running += weight
            if target < running:
                pick = index
                break
        chosen.append(positions.pop(pick))
        left.pop(pick)
    return chosen
