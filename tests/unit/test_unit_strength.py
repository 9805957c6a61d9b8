"""Strength and decay (memory-model.md §5, §7-§11) and the HIPPO_FAKE_NOW clock."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import pytest

from hippod.base import clock
from hippod.model import strength as st

REMOVAL_THRESHOLD = 0.05


def _strength(days: float, **overrides: Any) -> float:
    args: dict[str, Any] = {
        "days": days,
        "half_life_days": 365.0,
        "pos": 0,
        "neg": 0,
        "retrieval_count": 0,
        "valence": "neutral",
        "pinned": False,
        "loss_aversion": 1.0,
    }
    args.update(overrides)
    return st.strength(**args)


def _crossing_day(threshold: float, **overrides: Any) -> float:
    """The day at which strength falls to `threshold` (bisection; strength decreases with days)."""
    lo, hi = 0.0, 100_000.0
    assert _strength(lo, **overrides) > threshold > _strength(hi, **overrides)
    for _ in range(200):
        mid = (lo + hi) / 2
        if _strength(mid, **overrides) > threshold:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


# --- vectors.json -------------------------------------------------------------------------------


def test_strength_vector(strength_case: dict[str, Any]) -> None:
    given = strength_case["input"]
    value = st.strength(
        days=given["days_since_last_retrieved"],
        half_life_days=given["half_life_days"],
        pos=given["outcome_positive"],
        neg=given["outcome_negative"],
        retrieval_count=given["retrieval_count"],
        valence=given["valence"],
        pinned=given["pinned"],
        loss_aversion=given["loss_aversion_ratio"],
    )
    assert value == pytest.approx(strength_case["strength"], abs=1e-6)


def test_reward_factor_vector(reward_case: dict[str, Any]) -> None:
    value = st.reward_factor(reward_case["good"], reward_case["bad"])
    assert value == pytest.approx(reward_case["reward_factor"], abs=1e-6)


# --- memory-model.md §11 worked examples ---------------------------------------------------------


def test_fresh_remember_is_full_strength() -> None:
    assert _strength(0) == 1.0


def test_untouched_two_half_lives_is_a_quarter() -> None:
    assert _strength(730) == pytest.approx(0.25, abs=1e-9)


def test_error_memory_is_clamped_for_its_first_effective_half_life() -> None:
    assert _strength(730, half_life_days=730, valence="negative") == pytest.approx(1.0, abs=1e-9)
    assert _strength(1460, half_life_days=730, valence="negative") == pytest.approx(0.5, abs=1e-9)
    # Halfway through the first half-life, 2 x 0.707 is still clamped to 1.
    assert _strength(365, half_life_days=730, valence="negative") == 1.0


def test_recalled_once_boost_is_clamped_to_one() -> None:
    parts = st.strength_parts(
        days=0, half_life_days=367, pos=0, neg=0, retrieval_count=1, valence="neutral", pinned=False
    )
    assert parts.boost == pytest.approx(1.1, abs=1e-12)
    assert parts.strength == 1.0


def test_five_good_zero_bad() -> None:
    parts = st.strength_parts(
        days=730, half_life_days=365, pos=5, neg=0, retrieval_count=0, valence="neutral", pinned=False
    )
    assert round(parts.reward_factor, 4) == 1.4167
    assert round(parts.effective_half_life, 1) == 517.1
    assert round(parts.strength, 3) == 0.376
    assert parts.penalty == 1.0


def test_zero_good_three_bad() -> None:
    parts = st.strength_parts(
        days=0, half_life_days=365, pos=0, neg=3, retrieval_count=0, valence="neutral", pinned=False
    )
    assert parts.reward_factor == pytest.approx(0.625, abs=1e-12)
    assert round(parts.effective_half_life, 1) == 228.1
    assert parts.penalty == 0.125
    assert parts.strength == pytest.approx(0.125, abs=1e-12)
    assert round(_strength(100, neg=3), 3) == 0.092
    crossing = _crossing_day(REMOVAL_THRESHOLD, neg=3)
    assert round(crossing, 1) == 301.6
    assert _strength(301.5, neg=3) > REMOVAL_THRESHOLD > _strength(301.7, neg=3)


def test_two_good_two_bad_is_neutral() -> None:
    for days in (0, 100, 200, 900):
        assert _strength(days, pos=2, neg=2) == pytest.approx(_strength(days), abs=1e-12)
    assert st.reward_factor(2, 2) == 1.0
    assert st.penalty(2, 2) == 1.0


def test_one_good_four_bad() -> None:
    assert st.reward_factor(1, 4) == pytest.approx(0.75, abs=1e-12)
    assert st.penalty(1, 4) == 0.125
    assert _strength(0, pos=1, neg=4) == pytest.approx(0.125, abs=1e-12)


def test_removal_point_neutral() -> None:
    crossing = _crossing_day(REMOVAL_THRESHOLD)
    assert crossing == pytest.approx(365 * math.log2(20), abs=1e-6)
    assert round(crossing, 1) == 1577.5
    assert _strength(1577.4) > REMOVAL_THRESHOLD > _strength(1577.6)


def test_removal_point_error() -> None:
    kwargs: dict[str, Any] = {"half_life_days": 730, "valence": "negative"}
    crossing = _crossing_day(REMOVAL_THRESHOLD, **kwargs)
    assert crossing == pytest.approx(730 * math.log2(40), abs=1e-6)
    assert round(crossing, 1) == 3885.0
    assert _strength(3884.9, **kwargs) > REMOVAL_THRESHOLD > _strength(3885.1, **kwargs)


# --- the other terms ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pos", "neg", "expected"),
    [
        (0, 0, 1.0),
        (0, 1, 0.5),
        (0, 2, 0.25),
        (0, 3, 0.125),
        (0, 4, 0.125),
        (0, 50, 0.125),
        (5, 2, 1.0),
        (2, 5, 0.125),
        (3, 4, 0.5),
    ],
)
def test_penalty_is_capped_at_three_halvings(pos: int, neg: int, expected: float) -> None:
    assert st.penalty(pos, neg) == expected


def test_strength_with_many_bad_marks_uses_capped_penalty() -> None:
    # rf = 1 - 0.5 * 10 / 11; at day 0 the decay is 1, so only the capped penalty remains.
    assert _strength(0, neg=10) == pytest.approx(0.125, abs=1e-12)


@pytest.mark.parametrize(
    "overrides",
    [
        {"days": 0},
        {"days": 5000},
        {"days": 1e9, "neg": 10},
        {"days": 10, "half_life_days": 0},
        {"days": 10, "valence": "negative", "loss_aversion": 0.5},
    ],
)
def test_pinned_is_always_full_strength(overrides: dict[str, Any]) -> None:
    days = overrides.pop("days")
    assert _strength(days, pinned=True, **overrides) == 1.0


def test_zero_effective_half_life_gives_zero() -> None:
    assert _strength(10, half_life_days=0) == 0.0
    assert _strength(10, half_life_days=-5) == 0.0


def test_negative_days_count_as_zero() -> None:
    assert _strength(-30) == 1.0


def test_positive_valence_weighs_like_neutral() -> None:
    assert _strength(400, valence="positive") == pytest.approx(_strength(400), abs=1e-12)
    assert st.valence_multiplier("positive") == 1.0
    assert st.valence_multiplier("neutral") == 1.0
    assert st.valence_multiplier("critical", 0.75) == 2.0
    assert st.valence_multiplier("negative", 0.75) == 1.5


def test_loss_aversion_scales_negative_valence() -> None:
    # 0.5 ** (1460 / 730) = 0.25; x 2.0 x 1.5 = 0.75.
    assert _strength(1460, half_life_days=730, valence="negative", loss_aversion=1.5) == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, 1.0),
        ("", 1.0),
        ("   ", 1.0),
        ("abc", 1.0),
        ("nan", 1.0),
        ("0.49", 1.0),
        ("0", 1.0),
        ("-1", 1.0),
        ("0.5", 0.5),
        ("0.75", 0.75),
        (" 1.5 ", 1.5),
        ("2.0", 2.0),
        ("2.01", 2.0),
        ("10", 2.0),
        ("inf", 2.0),
    ],
)
def test_loss_aversion_from_env(raw: str | None, expected: float) -> None:
    assert st.loss_aversion_from_env(raw) == expected


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ([], "neutral"),
        (["deploy", "path:etl"], "neutral"),
        (["error"], "negative"),
        (["critical"], "critical"),
        (["error", "critical"], "critical"),
        (["success"], "positive"),
        (["win"], "positive"),
        (["error", "success"], "negative"),
    ],
)
def test_valence_for_tags(tags: list[str], expected: str) -> None:
    assert st.valence_for_tags(tags) == expected


def test_initial_half_life() -> None:
    assert st.initial_half_life([]) == 365.0
    assert st.initial_half_life(["deploy"]) == 365.0
    assert st.initial_half_life(["path:etl", "error"]) == 730.0
    assert st.initial_half_life(["error"], default=100.0) == 200.0
    assert st.initial_half_life(["critical"], default=100.0) == 100.0


@pytest.mark.parametrize(
    ("pos", "neg", "superseded", "expected"),
    [
        (0, 0, False, True),
        (2, 2, False, True),
        (3, 1, False, True),
        (0, 1, False, False),
        (2, 3, False, False),
        (0, 0, True, False),
        (5, 0, True, False),
    ],
)
def test_strengthens(pos: int, neg: int, superseded: bool, expected: bool) -> None:
    assert st.strengthens(pos, neg, superseded) is expected


@pytest.mark.parametrize(
    ("pinned", "confidence", "days", "expected"),
    [
        (False, "observed", 31, True),
        (False, "inferred", 30.5, True),
        (False, "stale", 400, True),
        (False, "observed", 30, False),
        (False, "observed", 1, False),
        (False, "verified", 400, False),
        (True, "observed", 400, False),
    ],
)
def test_is_aged(pinned: bool, confidence: str, days: float, expected: bool) -> None:
    assert st.is_aged(pinned=pinned, confidence=confidence, days_since_retrieved=days) is expected


# --- Memory.strength_at through the HIPPO_FAKE_NOW clock ------------------------------------------


def test_memory_strength_at_uses_the_fake_clock(make_memory: Any, fake_clock: Any) -> None:
    fake_clock(clock.parse_iso("2026-01-01T00:00:00Z"))
    memory = make_memory(last_retrieved="2025-01-01T00:00:00.000Z", created="2025-01-01T00:00:00.000Z")
    parts = memory.strength_at(clock.now())
    assert parts.days == pytest.approx(365.0, abs=1e-9)
    assert parts.strength == pytest.approx(0.5, abs=1e-9)

    # Moving the fake clock another half-life on halves it again.
    fake_clock(clock.parse_iso("2027-01-01T00:00:00Z"))
    assert memory.strength_at(clock.now()).strength == pytest.approx(0.25, abs=1e-9)


def test_memory_strength_at_reads_every_field(make_memory: Any, fake_clock: Any) -> None:
    fake_clock(clock.parse_iso("2026-04-11T00:00:00.000Z"))
    memory = make_memory(
        last_retrieved="2026-01-01T00:00:00.000Z",  # 100 days before
        outcome_negative=3,
    )
    assert memory.strength_at(clock.now()).strength == pytest.approx(0.092247, abs=1e-6)
    memory.emotional_valence = "negative"
    memory.half_life_days = 730.0
    memory.outcome_negative = 0
    fake_clock(clock.parse_iso("2030-01-01T00:00:00Z"))  # 1461 days after last_retrieved
    expected = min(1.0, 2.0 * 0.75 * 0.5 ** (1461 / 730))
    assert memory.strength_at(clock.now(), loss_aversion=0.75).strength == pytest.approx(expected, abs=1e-9)
    memory.pinned = True
    assert memory.strength_at(clock.now()).strength == 1.0


def test_last_retrieved_in_the_future_counts_as_now(make_memory: Any) -> None:
    memory = make_memory(last_retrieved="2030-01-01T00:00:00.000Z")
    parts = memory.strength_at(clock.parse_iso("2026-01-01T00:00:00Z"))
    assert parts.days == 0.0
    assert parts.strength == 1.0


def test_load_fake_now_reads_env(monkeypatch: pytest.MonkeyPatch, fake_clock: Any) -> None:
    monkeypatch.setenv("HIPPO_FAKE_NOW", "2030-05-06T07:08:09.123Z")
    clock.load_fake_now()
    assert clock.now() == datetime(2030, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    assert clock.iso(clock.now()) == "2030-05-06T07:08:09.123Z"
    # A fixed clock does not move.
    assert clock.now() == clock.now()


def test_load_fake_now_naive_value_is_utc(monkeypatch: pytest.MonkeyPatch, fake_clock: Any) -> None:
    monkeypatch.setenv("HIPPO_FAKE_NOW", "2027-02-03T04:05:06")
    clock.load_fake_now()
    assert clock.now() == datetime(2027, 2, 3, 4, 5, 6, tzinfo=UTC)


def test_load_fake_now_unset_uses_the_real_clock(monkeypatch: pytest.MonkeyPatch, fake_clock: Any) -> None:
    fake_clock(datetime(2001, 1, 1, tzinfo=UTC))
    monkeypatch.delenv("HIPPO_FAKE_NOW", raising=False)
    clock.load_fake_now()
    before = datetime.now(UTC)
    current = clock.now()
    after = datetime.now(UTC)
    assert before <= current <= after
    assert current.tzinfo is not None


def test_load_fake_now_blank_uses_the_real_clock(monkeypatch: pytest.MonkeyPatch, fake_clock: Any) -> None:
    monkeypatch.setenv("HIPPO_FAKE_NOW", "   ")
    clock.load_fake_now()
    assert abs((clock.now() - datetime.now(UTC)).total_seconds()) < 5


def test_days_between_and_iso() -> None:
    later = clock.parse_iso("2026-01-02T12:00:00Z")
    assert clock.days_between("2026-01-01T00:00:00.000Z", later) == pytest.approx(1.5)
    assert clock.days_between("2026-01-03T00:00:00.000Z", later) == 0.0
    moment = datetime(2026, 9, 30, 10, 12, 44, 120999, tzinfo=UTC)
    assert clock.iso(moment) == "2026-09-30T10:12:44.120Z"
    assert clock.parse_iso(clock.iso(moment)) == moment.replace(microsecond=120000)


# --- the inlined common cases give the general formula's values ----------------------------------


@pytest.mark.parametrize("pos", [0, 1, 3])
@pytest.mark.parametrize("neg", [0, 2, 5])
@pytest.mark.parametrize("retrieval_count", [0, 1, 7])
@pytest.mark.parametrize("valence", ["neutral", "positive", "negative", "critical"])
def test_strength_parts_follow_the_formula_in_every_case(
    pos: int, neg: int, retrieval_count: int, valence: str
) -> None:
    for days, half_life in ((0.0, 365.0), (12.5, 30.0), (400.0, 365.0), (3.0, 0.0)):
        parts = st.strength_parts(
            days=days,
            half_life_days=half_life,
            pos=pos,
            neg=neg,
            retrieval_count=retrieval_count,
            valence=valence,
            pinned=False,
            loss_aversion=1.5,
        )
        hl_eff = half_life * st.reward_factor(pos, neg)
        decay = 0.0 if hl_eff <= 0 else 0.5 ** (days / hl_eff)
        boost = 1.0 + 0.1 * math.log2(retrieval_count + 1)
        emotion = st.valence_multiplier(valence, 1.5)
        expected = min(1.0, max(0.0, decay * boost * emotion)) * st.penalty(pos, neg)
        # Exactly equal: recall ranks by these, and ties are broken by content and id.
        assert (parts.strength, parts.decay, parts.boost, parts.emotion) == (expected, decay, boost, emotion)
        assert (parts.reward_factor, parts.penalty) == (st.reward_factor(pos, neg), st.penalty(pos, neg))


@pytest.mark.parametrize("pos", [0, 1, 3])
@pytest.mark.parametrize("neg", [0, 2, 5])
@pytest.mark.parametrize("retrieval_count", [0, 1, 7])
@pytest.mark.parametrize("valence", ["neutral", "positive", "negative", "critical"])
@pytest.mark.parametrize("pinned", [False, True])
def test_live_strength_is_strength_parts_to_the_bit(
    pos: int, neg: int, retrieval_count: int, valence: str, pinned: bool
) -> None:
    for days, half_life in ((0.0, 365.0), (-2.0, 30.0), (12.5, 30.0), (400.0, 365.0), (3.0, 0.0), (1e9, 1.0)):
        parts = st.strength_parts(
            days=days,
            half_life_days=half_life,
            pos=pos,
            neg=neg,
            retrieval_count=retrieval_count,
            valence=valence,
            pinned=pinned,
            loss_aversion=1.5,
        )
        value = st.live_strength(days, half_life, pos, neg, retrieval_count, valence, pinned, 1.5)
        assert value.hex() == parts.strength.hex()
