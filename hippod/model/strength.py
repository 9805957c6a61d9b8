"""Strength and decay: pure functions of a memory's fields and the time (memory-model.md §7-§8)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hippod.base.clock import days_between

DEFAULT_HALF_LIFE_DAYS = 365.0
ERROR_HALF_LIFE_FACTOR = 2.0
RETRIEVAL_HALF_LIFE_BONUS = 2.0
MAX_PENALTY_HALVINGS = 3
AGED_AFTER_DAYS = 30.0
AT_RISK_BELOW = 0.2


def reward_factor(pos: int, neg: int) -> float:
    """Half-life multiplier from cumulative outcome marks, in (0.5, 1.5)."""
    if pos == 0 and neg == 0:
        return 1.0
    return 1.0 + 0.5 * (pos - neg) / (pos + neg + 1)


def penalty(pos: int, neg: int) -> float:
    """Halve strength once per bad mark beyond the good ones, at most three times."""
    return 0.5 ** min(MAX_PENALTY_HALVINGS, max(0, neg - pos))


def valence_multiplier(valence: str, loss_aversion: float = 1.0) -> float:
    """Errors and critical memories count double; negative scales with the loss-aversion ratio."""
    if valence == "negative":
        return 2.0 * loss_aversion
    if valence == "critical":
        return 2.0
    return 1.0


def loss_aversion_from_env(raw: str | None) -> float:
    """HIPPO_LOSS_AVERSION_RATIO: below 0.5 or unparseable -> 1.0; above 2.0 -> 2.0."""
    if raw is None or not raw.strip():
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        return 1.0
    if math.isnan(value) or value < 0.5:
        return 1.0
    return min(value, 2.0)


# Not frozen: recall builds one per candidate, and a frozen dataclass's __init__ costs several
# times a plain one's.
@dataclass(slots=True)
class StrengthParts:
    """Every term of the strength formula, for `inspect` and `--why`."""

    strength: float
    days: float
    reward_factor: float
    effective_half_life: float
    decay: float
    boost: float
    emotion: float
    penalty: float


def strength_parts(
    *,
    days: float,
    half_life_days: float,
    pos: int,
    neg: int,
    retrieval_count: int,
    valence: str,
    pinned: bool,
    loss_aversion: float = 1.0,
) -> StrengthParts:
    """Compute live strength with the clock basis, keeping each factor."""
    # Recall computes this for every candidate: the common cases are inlined (no marks, never
    # retrieved, neutral), each giving the very value the general formula would.
    days = max(0.0, days)
    if pos or neg:
        rf = reward_factor(pos, neg)
        pen = penalty(pos, neg)
    else:
        rf = pen = 1.0
    hl_eff = half_life_days * rf
    decay = 0.0 if hl_eff <= 0 else 0.5 ** (days / hl_eff)
    boost = 1.0 + 0.1 * math.log2(retrieval_count + 1) if retrieval_count else 1.0
    emo = 1.0 if valence == "neutral" else valence_multiplier(valence, loss_aversion)
    value = min(1.0, max(0.0, decay * boost * emo)) * pen
    if math.isnan(value):
        value = 0.0
    if pinned:
        value = 1.0
    return StrengthParts(value, days, rf, hl_eff, decay, boost, emo, pen)


def live_strength(
    days: float,
    half_life_days: float,
    pos: int,
    neg: int,
    retrieval_count: int,
    valence: str,
    pinned: bool,
    loss_aversion: float = 1.0,
) -> float:
    """`strength_parts(...).strength`, without the parts: recall computes it for every candidate, and
    the keyword call and the parts' object cost more than the arithmetic. The same operations in the
    same order, so the same value to the bit (tests/unit/test_unit_strength.py checks every case)."""
    if pos or neg:
        rf = reward_factor(pos, neg)
        pen = penalty(pos, neg)
    else:
        rf = pen = 1.0
    hl_eff = half_life_days * rf
    decay = 0.0 if hl_eff <= 0 else 0.5 ** (max(0.0, days) / hl_eff)
    boost = 1.0 + 0.1 * math.log2(retrieval_count + 1) if retrieval_count else 1.0
    emo = 1.0 if valence == "neutral" else valence_multiplier(valence, loss_aversion)
    value = min(1.0, max(0.0, decay * boost * emo)) * pen
    if pinned:
        return 1.0
    return 0.0 if math.isnan(value) else value


def strength(
    *,
    days: float,
    half_life_days: float,
    pos: int,
    neg: int,
    retrieval_count: int,
    valence: str,
    pinned: bool,
    loss_aversion: float = 1.0,
) -> float:
    """Live strength in [0, 1] (memory-model.md §7, clock basis)."""
    return live_strength(days, half_life_days, pos, neg, retrieval_count, valence, pinned, loss_aversion)


def live_strengths(rows: Iterable[tuple[Any, ...]], now: datetime, loss_aversion: float = 1.0) -> list[float]:
    """Live strength at `now` of each reports.status_rows row."""
    return [
        strength(
            days=days_between(last, now),
            half_life_days=half_life,
            pos=pos,
            neg=neg,
            retrieval_count=count,
            valence=valence,
            pinned=bool(pinned),
            loss_aversion=loss_aversion,
        )
        for _id, _layer, pinned, _superseded, last, half_life, pos, neg, count, valence in rows
    ]


def valence_for_tags(tags: list[str]) -> str:
    """critical -> critical; error -> negative; success/win -> positive; else neutral."""
    tagset = set(tags)
    if "critical" in tagset:
        return "critical"
    if "error" in tagset:
        return "negative"
    if tagset & {"success", "win"}:
        return "positive"
    return "neutral"


def initial_half_life(tags: list[str], default: float = DEFAULT_HALF_LIFE_DAYS) -> float:
    """Half-life for a new memory: the store default, doubled when it carries the error tag."""
    return default * ERROR_HALF_LIFE_FACTOR if "error" in tags else default


def strengthens(pos: int, neg: int, superseded: bool) -> bool:
    """Whether being returned strengthens a memory: never while bad marks lead or once superseded."""
    return neg <= pos and not superseded


def is_aged(*, pinned: bool, confidence: str, days_since_retrieved: float) -> bool:
    """Read-time label: unpinned, not verified, untouched for more than 30 days."""
    return not pinned and confidence != "verified" and days_since_retrieved > AGED_AFTER_DAYS
