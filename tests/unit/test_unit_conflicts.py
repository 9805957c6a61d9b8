"""The conflict rules of sleep.md §7: the spec's must and must-not pairs, windows, persistence."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hippod.model import conflicts as c
from hippod.model.memory import Memory
from hippod.model.sleep_plan import ConflictRow, conflict_changes

FLAG_ON, FLAG_OFF = (
    "The feature flag is enabled for production users",
    "The feature flag is disabled for production users",
)
MUST_CONFLICT = [
    (FLAG_ON, FLAG_OFF, c.REASON_ENABLED),
    ("API auth must be enabled in prod", "Disable API auth in prod", c.REASON_ENABLED),
    ("Always use Sled for local storage", "Never use Sled for local storage", c.REASON_ALWAYS),
    ("Production deploys must require approval", "Production deploys should not require approval",
     c.REASON_POLARITY),
    ("Metrics endpoint is available in staging", "Metrics endpoint is missing in staging", c.REASON_POLARITY),
    ("Background sync works on iOS", "Background sync is broken on iOS", c.REASON_POLARITY),
]  # fmt: skip
MUST_NOT_CONFLICT = [
    ("Always create a worktree when working in exemem-workspace", "Never touch other agents worktrees"),
    ("Schema service owns schema creation", "Schemas are global"),
    ("Multi-node dogfood snapshots", "Dogfood database snapshot"),
]


@pytest.mark.parametrize(("a", "b", "reason"), MUST_CONFLICT)
def test_must_conflict(a: str, b: str, reason: str) -> None:
    for first, second in ((a, b), (b, a)):
        hit = c.conflict_between(first, second)
        assert hit is not None, (first, second)
        assert hit[0] == reason
        assert hit[1] >= 0.5


@pytest.mark.parametrize(("a", "b"), MUST_NOT_CONFLICT)
def test_must_not_conflict(a: str, b: str) -> None:
    assert c.conflict_between(a, b) is None
    assert c.conflict_between(b, a) is None


def test_detect_finds_the_pairs_only_within_a_tenant() -> None:
    a, b = MUST_CONFLICT[0][:2]
    inputs = [
        c.ConflictInput("mem_b", "default", a, False),
        c.ConflictInput("mem_a", "default", b, False),
        c.ConflictInput("mem_c", "other", b, False),
        c.ConflictInput("mem_d", "default", "Schemas are global", False),
    ]
    found = c.detect(inputs)
    assert [(d.a, d.b, d.tenant) for d in found] == [("mem_a", "mem_b", "default")]
    assert found[0].score == pytest.approx(4 / 6)


def test_two_traces_never_conflict() -> None:
    a, b = MUST_CONFLICT[2][:2]
    assert (
        c.detect([c.ConflictInput("t1", "default", a, True), c.ConflictInput("t2", "default", b, True)]) == []
    )
    assert (
        len(c.detect([c.ConflictInput("t1", "default", a, True), c.ConflictInput("t2", "default", b, False)]))
        == 1
    )


def test_window_and_distinctive_tokens() -> None:
    assert c.window("Don't   PANIC: it's fine!") == " don't panic it's fine "
    words = " ".join(f"w{i}" for i in range(45)) + " disabled"
    assert " disabled " not in c.window(words)  # only the first 40 words count
    assert c.distinctive_tokens("The API is NOT enabled for the old users") == {
        "api",
        "not",
        "enabled",
        "users",
    }


def test_must_followed_by_not_is_negative_not_always() -> None:
    assert (
        c.rule_reason(c.window("You must not push to main"), c.window("You must push to main"))
        == c.REASON_ALWAYS
    )
    assert (
        c.rule_reason(c.window("Deploys must not skip review"), c.window("Deploys must not skip tests"))
        is None
    )


def test_persistence_rules(make_memory: Callable[..., Memory]) -> None:
    fresh = c.Detected("m1", "m2", "default", "r", 0.6)
    still = c.Detected("m3", "m4", "default", "r", 0.6)
    by_user = c.Detected("m5", "m6", "default", "r", 0.6)
    back = c.Detected("m7", "m8", "default", "r", 0.6)
    existing = [
        ConflictRow(1, "m3", "m4", "default", "open", None),
        ConflictRow(2, "m5", "m6", "default", "resolved", "user"),
        ConflictRow(3, "m7", "m8", "default", "resolved", "auto"),
        ConflictRow(4, "m9", "mA", "default", "open", None),
    ]
    live = [
        make_memory(id="m1"),
        make_memory(id="m2", conflicts_with=["m1"]),
        make_memory(id="m9", conflicts_with=["mA"]),
    ]
    changes = conflict_changes(
        [fresh, still, by_user, back], existing, {m.id: m.conflicts_with for m in live}
    )
    assert changes.insert == [fresh]
    assert changes.reopen == [(3, back)]
    assert changes.refresh == [(1, still)]
    assert changes.auto_resolve == [4]
    assert (changes.open, changes.new) == (3, 2)
    assert changes.conflicts_with == {"m1": ["m2"], "m9": []}  # m2 already right; m9's peer is gone


def test_detect_skips_settled_pairs_unless_known() -> None:
    a = c.ConflictInput("m1", "default", "The feature flag is enabled for production users", False)
    b = c.ConflictInput("m2", "default", "The feature flag is disabled for production users", False)
    new = c.ConflictInput("m3", "default", "The feature flag is disabled for production users now", False)
    # Both settled and not a stored conflict: the last sleep found nothing between them.
    assert c.detect([a, b], {"m1", "m2"}) == []
    # A stored conflict between settled memories is confirmed, so it stays open.
    assert [(d.a, d.b) for d in c.detect([a, b], {"m1", "m2"}, [("m1", "m2")])] == [("m1", "m2")]
    # A newer memory is compared with settled ones.
    assert [(d.a, d.b) for d in c.detect([a, b, new], {"m1", "m2"})] == [("m1", "m3")]
