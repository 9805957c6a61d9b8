"""Decay, merge, dedupe, junk, replay and the transfer score (sleep.md §3-§6, §8): pure functions."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from hippod.base.clock import parse_iso
from hippod.model import decay, dedupe, merge, share
from hippod.model.memory import Memory
from hippod.model.secrets import looks_secret
from hippod.model.simjoin import SetIndex, jaccard
from hippod.model.tokenize import text_overlap

NOW = datetime(2030, 1, 1, tzinfo=UTC)
OLD = "2020-01-01T00:00:00.000Z"  # 10 years before NOW: a 365-day memory has faded


def test_protected_rows(make_memory: Callable[..., Memory]) -> None:
    assert not decay.is_protected(make_memory())
    for fields in (
        {"pinned": True},
        {"kind": "raw"},
        {"compaction_id": "c1"},
        {"source": "decision"},
        {"superseded_by": "mem_x"},
        {"layer": "buffer"},
    ):
        assert decay.is_protected(make_memory(**fields)), fields


def test_decay_pass_moves_deletes_and_keeps(make_memory: Callable[..., Memory]) -> None:
    faded = make_memory("Plain old fact about the build", last_retrieved=OLD)
    secret = make_memory("token: ghp_" + "a" * 36, last_retrieved=OLD)
    pinned = make_memory("Pinned old fact", last_retrieved=OLD, pinned=True)
    fresh = make_memory("Fresh fact", last_retrieved="2029-12-31T00:00:00.000Z")
    result = decay.decay_pass(
        [faded, secret, pinned, fresh], NOW, basis="clock", avg_gap=1.0, dormant_enabled=True
    )
    assert [m for m, _ in result.dormant] == [faded]
    assert [m for m, _ in result.secret_deleted] == [secret]
    assert result.survivors == [pinned, fresh]
    off = decay.decay_pass([faded], NOW, basis="clock", avg_gap=1.0, dormant_enabled=False)
    assert [m for m, _ in off.deleted] == [faded]


def test_sleep_basis(make_memory: Callable[..., Memory]) -> None:
    memory = make_memory(last_retrieved="2029-01-01T00:00:00.000Z")  # 365 days before NOW
    assert decay.sleep_strength(memory, NOW, "clock", 3.0) == pytest.approx(0.5)
    assert decay.sleep_strength(memory, NOW, "adaptive", 3.0) == pytest.approx(0.5 ** (1 / 3))
    assert decay.sleep_strength(memory, NOW, "session", 2.0) == pytest.approx(0.5**0.5)
    assert decay.average_gap_days(["2030-01-01T00:00:00Z"]) == 1.0
    gaps = ["2030-01-01T00:00:00Z", "2030-01-03T00:00:00Z", "2030-01-07T00:00:00Z"]
    assert decay.average_gap_days(gaps) == pytest.approx(3.0)


@pytest.mark.parametrize(
    ("basis", "gap"),
    [
        ("clock", 1.0),
        ("adaptive", 1.0),
        ("adaptive", 0.5),
        ("adaptive", 2.7),
        ("session", 1.0),
        ("session", 0.4),
    ],
)
def test_decay_pass_decays_as_sleep_strength_and_strength_at(
    make_memory: Callable[..., Memory], basis: str, gap: float
) -> None:
    # The pass computes both strengths without calling them; they must agree to the bit.
    days = [0.0, 0.3, 40.0, 400.0, 1300.0, 2100.0]
    rows = [
        make_memory(
            f"fact {n}",
            last_retrieved=f"{2030 - int(d // 365) - 1}-{(n % 12) + 1:02d}-15T0{n % 10}:17:33.250Z",
            retrieval_count=n % 4,
            outcome_positive=n % 3,
            outcome_negative=(n * 7) % 5,
            emotional_valence=("neutral", "positive", "negative", "critical")[n % 4],
            half_life_days=(365.0, 30.0, 730.0)[n % 3],
            pinned=n == 5,
            strength=0.123456,
        )
        for n, d in enumerate(days * 4)
    ]
    expected_live = [m.strength_at(NOW, 1.3).strength for m in rows]
    expected_sleep = [decay.sleep_strength(m, NOW, basis, gap, 1.3) for m in rows]
    result = decay.decay_pass(
        [replace(m) for m in rows], NOW, basis=basis, avg_gap=gap, dormant_enabled=True, loss_aversion=1.3
    )
    faded = {m.id: value for m, value in result.dormant + result.secret_deleted + result.deleted}
    assert faded and result.survivors
    for memory, live, value in zip(rows, expected_live, expected_sleep, strict=True):
        if memory.id in faded:
            assert faded[memory.id] == value
        else:
            kept = next(m for m in result.survivors if m.id == memory.id)
            assert kept.strength == (live if round(live, 4) != round(memory.strength, 4) else memory.strength)
            assert value >= decay.FADED_BELOW or decay.is_protected(memory)


def test_decay_pass_writes_a_cache_only_once_it_lags(make_memory: Callable[..., Memory]) -> None:
    # Retrieved a year ago with a 365-day half-life: live strength 0.5 at NOW.
    year_ago = "2029-01-01T00:00:00.000Z"
    live = make_memory(last_retrieved=year_ago).strength_at(NOW).strength
    assert live == 0.5  # exactly: a cache CACHE_DRIFT above it lags by the drift, not a hair less
    near = make_memory("cache a little ahead", last_retrieved=year_ago, strength=live + decay.CACHE_DRIFT / 2)
    far = make_memory(
        "cache a few days' decay ahead", last_retrieved=year_ago, strength=live + decay.CACHE_DRIFT
    )
    same = make_memory("cache right", last_retrieved=year_ago, strength=round(live, 4))
    result = decay.decay_pass([near, far, same], NOW, basis="clock", avg_gap=1.0, dormant_enabled=True)
    assert result.survivors == [near, far, same]
    assert result.refreshed == [far]
    # The plan goes on with the live value wherever it moved at four decimals, written or not.
    assert near.strength == far.strength == live
    assert same.strength == round(live, 4)


def test_rebase(make_memory: Callable[..., Memory]) -> None:
    assert decay.rebase(make_memory(tags=["error"], retrieval_count=3), 365) == 736
    assert decay.rebase(make_memory(source="decision", tags=["error"], retrieval_count=1), 365) == 367


def test_replay_is_seeded_and_skips_ineligible(make_memory: Callable[..., Memory]) -> None:
    rows = [make_memory(f"memory number {i}") for i in range(10)]
    rows += [
        make_memory("pinned", pinned=True),
        make_memory("bad", outcome_negative=2),
        make_memory("s", confidence="stale"),
    ]
    first = decay.replay_sample(rows, NOW, 5)
    assert len(first) == 5 and len({m.id for m in first}) == 5
    assert [m.id for m in first] == [m.id for m in decay.replay_sample(rows, NOW, 5)]
    assert all(m.content.startswith("memory number") for m in first)


def test_merge_clusters_and_text(make_memory: Callable[..., Memory]) -> None:
    a = make_memory(
        "Deploy to staging failed because the migration was skipped",
        created="2026-01-01T00:00:01.000Z",
        tags=["error", "deploy"],
        emotional_valence="negative",
        half_life_days=730.0,
    )
    b = make_memory(
        "Deploy to staging failed because the migration was skipped twice",
        created="2026-01-01T00:00:02.000Z",
        tags=["deploy", "ci"],
    )
    c = make_memory("Unrelated note about lunch menus", created="2026-01-01T00:00:03.000Z")
    d = make_memory(
        "Deploy to staging failed: migration skipped", created="2026-01-01T00:00:04.000Z", pinned=True
    )
    found = merge.clusters([m for m in (a, b, c, d) if merge.merge_candidate(m)])
    assert found == [[a, b]]
    built = merge.build_merge(
        found[0],
        new_id="sem_1",
        now=parse_iso("2026-02-01T00:00:00.000Z"),
        default_half_life=365,
        origin_project="p",
        loss_aversion=1.0,
    )
    sem = built.semantic
    assert sem.content == f"[Consolidated from 2 related memories]\n\n{b.content}"
    assert (sem.layer, sem.source, sem.confidence, sem.schema_fit) == (
        "semantic",
        "consolidation",
        "inferred",
        0.7,
    )
    assert sem.tags == ["error", "deploy", "ci"] and sem.emotional_valence == "negative"
    assert sem.half_life_days == 730 and sem.parents == [a.id, b.id]
    assert [(m.half_life_days, m.merged_into) for m in built.members] == [(219, "sem_1"), (109, "sem_1")]
    # A member is carried as its change alone; its strength is the row's at the sleep on the new half-life.
    at = parse_iso("2026-02-01T00:00:00.000Z")
    for member, demoted in zip(found[0], built.members, strict=True):
        row = demoted.onto(member)
        assert (row.id, row.content, row.updated_at) == (
            member.id,
            member.content,
            "2026-02-01T00:00:00.000Z",
        )
        assert demoted.strength == replace(member, half_life_days=row.half_life_days).strength_at(at).strength
    assert built.first_text == a.content
    three = merge.merged_content([a, b, make_memory("x" * 200 + "\nsecond line")])
    assert three.splitlines()[0] == "[Consolidated pattern from 3 related memories]"
    assert three.splitlines()[-1] == "- " + "x" * 120


def test_merge_skips_marked_and_merged(make_memory: Callable[..., Memory]) -> None:
    assert not merge.merge_candidate(make_memory(outcome_negative=1))
    assert not merge.merge_candidate(make_memory(merged_into="sem_x"))
    assert not merge.merge_candidate(make_memory(tags=["extracted"]))
    assert not merge.merge_candidate(make_memory(layer="semantic"))


def test_dedupe_keeps_the_stronger_and_respects_conflicts_and_parents(
    make_memory: Callable[..., Memory],
) -> None:
    weak = make_memory("Run the linter before every commit in this repo", strength=0.5)
    strong = make_memory("Run the linter before every commit in this repo please", strength=0.9)
    found = dedupe.dedupe([weak, strong])
    assert [(d.deleted, d.kept, d.kind) for d in found] == [(weak, strong, "episodic")]
    on = make_memory("The feature flag is enabled for production users today")
    off = make_memory("The feature flag is disabled for production users today")
    assert text_overlap(on.content, off.content) > 0.7
    assert dedupe.dedupe([on, off]) == []
    parent = make_memory("Run the linter before every commit in this repo")
    child = make_memory(
        "Run the linter before every commit in this repo", layer="semantic", parents=[parent.id]
    )
    assert dedupe.dedupe([parent, child]) == []
    pinned = make_memory("Run the linter before every commit in this repo", pinned=True, strength=0.1)
    assert [d.deleted for d in dedupe.dedupe([strong, pinned])] == [strong]  # protected rows come first


def test_junk_rules() -> None:
    for text in (
        "tiny",
        "Bump version to 1.2.3",
        "v2.0.1",
        "chore(deps)!: bump 2.0",
        "Merge branch 'x' into main",
        "WIP stuff",
    ):
        assert dedupe.junk_reason(text) is not None, text
    assert dedupe.junk_reason("Use uv for the Python tooling in this repo") is None
    assert dedupe.junk_warning("to fix later maybe") == "starts like a fragment"
    assert dedupe.junk_warning("ok ok ok ok ok ok ok") == "fewer than 2 substantive words"
    assert dedupe.junk_warning("remember the cache thing") == "short and unspecific"
    assert dedupe.junk_warning("Remember the Redis cache") is None


def test_transfer_score(make_memory: Callable[..., Memory]) -> None:
    assert share.transfer_score(make_memory()) == 0.5
    assert share.transfer_score(make_memory(tags=["python", "gotcha"], retrieval_count=3)) == pytest.approx(
        0.8
    )
    assert share.transfer_score(make_memory(tags=["deploy", "config", "url", "cron"])) == 0.0
    assert share.transfer_score(make_memory(tags=["error"], emotional_valence="negative")) == pytest.approx(
        0.65
    )
    # Untagged, unpinned and used under 3 times: the base and the valence's share alone.
    for valence in ("neutral", "positive", "negative", "critical"):
        for count in (0, 2):
            untagged = make_memory(emotional_valence=valence, retrieval_count=count)
            assert share.transfer_score(untagged) == (0.55 if valence in ("negative", "critical") else 0.5)
    assert share.transfer_score(make_memory(retrieval_count=3)) == 0.6
    assert share.transfer_score(make_memory(pinned=True, emotional_valence="critical")) == 0.65
    assert share.contributor("shared:my:proj:2026-01-01T00:00:00.000Z") == "my:proj"
    assert share.contributor("promoted:web") == "web"


def test_secret_detector() -> None:
    assert looks_secret("AKIA" + "A" * 16)
    assert looks_secret("-----BEGIN RSA PRIVATE KEY-----")
    assert looks_secret("the api key is sk-" + "a" * 24)
    assert not looks_secret("sk-" + "a" * 24)  # needs a key word nearby
    assert looks_secret("password=hunter2hunter2x9")
    assert looks_secret("anything", ["credential"])
    assert not looks_secret("Use the token bucket limiter")


def test_set_index_finds_every_pair_at_the_threshold() -> None:
    import random

    rng = random.Random(7)
    words = [f"w{i}" for i in range(30)]
    sets = [frozenset(rng.sample(words, rng.randint(1, 8))) for _ in range(150)] + [frozenset(), frozenset()]
    for threshold in (0.35, 0.5, 0.7):
        index = SetIndex(sets, threshold)
        found: set[tuple[int, int]] = set()
        for k in range(len(sets)):  # each pair once, from its later side
            found |= {(i, k) for i in index.matches(k)}
            assert {(i, k) for i in index.matches(k, strict=True)} == {
                (i, k) for i in index.matches(k) if jaccard(sets[i], sets[k]) > threshold
            }
            index.add(k)
        expected = {
            (i, j)
            for i in range(len(sets))
            for j in range(i + 1, len(sets))
            if jaccard(sets[i], sets[j]) >= threshold
        }
        assert found == expected


def test_merge_asks_only_about_memories_newer_than_the_last_sleep(make_memory: Callable[..., Memory]) -> None:
    text = "Deploy to staging failed because the migration was skipped"
    old_a = make_memory(text, created="2026-01-01T00:00:01.000Z", updated_at="2026-01-01T00:00:01.000Z")
    old_b = make_memory(
        text + " again", created="2026-01-01T00:00:02.000Z", updated_at="2026-01-01T00:00:02.000Z"
    )
    new = make_memory(
        text + " once more", created="2026-01-03T00:00:00.000Z", updated_at="2026-01-03T00:00:00.000Z"
    )
    last_sleep = datetime(2026, 1, 2, tzinfo=UTC)
    # Two settled memories are not compared again (the last sleep compared them) ...
    assert merge.clusters([old_a, old_b], last_sleep) == []
    assert merge.clusters([old_a, old_b]) == [[old_a, old_b]]
    # ... but a newer one still joins the earliest settled seed it matches.
    assert merge.clusters([old_a, old_b, new], last_sleep) == [[old_a, new]]
    # An old memory changed since (recalled, marked, restored from dormant) is asked about again.
    touched = replace(old_b, updated_at="2026-01-03T00:00:00.000Z")
    assert merge.clusters([old_a, touched], last_sleep) == [[old_a, touched]]


def test_dedupe_looks_only_at_pairs_with_a_memory_newer_than_the_last_sleep(
    make_memory: Callable[..., Memory],
) -> None:
    text = "The nightly export writes parquet files to the reports bucket"
    before, after = "2026-01-01T00:00:00.000Z", "2026-01-03T00:00:00.000Z"
    old = make_memory(text, created=before, updated_at=before, strength=0.9)
    old_copy = make_memory(text + " daily", created=before, updated_at=before, strength=0.5)
    new_copy = make_memory(text + " nightly", created=after, updated_at=after, strength=0.4)
    last_sleep = datetime(2026, 1, 2, tzinfo=UTC)
    # Two settled rows were compared by the last sleep (and kept both for a reason): not again.
    assert dedupe.dedupe([old, old_copy], last_sleep) == []
    assert [d.deleted.id for d in dedupe.dedupe([old, old_copy])] == [old_copy.id]
    # A new row is still compared with settled ones, on either side of the order.
    assert [d.deleted.id for d in dedupe.dedupe([old, new_copy], last_sleep)] == [new_copy.id]
    stronger_new = make_memory(text + " hourly", created=after, updated_at=after, strength=1.0)
    assert [d.deleted.id for d in dedupe.dedupe([old, stronger_new], last_sleep)] == [old.id]


def test_replay_weight_follows_the_formula(make_memory: Callable[..., Memory]) -> None:
    now = datetime(2026, 1, 11, tzinfo=UTC)
    # 2 good marks and 1 bad: max(0.1, 1 + 0.5*2 + 0.25*1) = 2.25; negative valence x1.5;
    # 3 retrievals: / 4; 240 hours since the last: x (1 + 0.1 ln 241); strength 0.5.
    memory = make_memory(
        "x y z",
        outcome_positive=2,
        outcome_negative=1,
        emotional_valence="negative",
        retrieval_count=3,
        last_retrieved="2026-01-01T00:00:00.000Z",
    )
    expected = 2.25 * 1.5 / 4 * (1 + 0.1 * math.log(241)) * 0.5
    assert decay.replay_weight(memory, now, 0.5) == pytest.approx(expected)
    # The floors: a net-negative outcome term and a faded strength count at least 0.1 each.
    worst = make_memory("x y z", outcome_negative=9, last_retrieved="2026-01-11T00:00:00.000Z")
    assert decay.replay_weight(worst, now, 0.0) == pytest.approx(0.1 * 1.0 / 1 * 1.0 * 0.1)
