"""The shared import core (ingest.md §1) and the JSON export reader (§2)."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from hippod.ingest.chunking import Chunk, FormatError
from hippod.ingest.export_doc import Record, is_legacy_base, parse_export, record_memory, render_markdown
from hippod.ingest.import_core import (
    StoredDuplicates,
    Verdict,
    judge,
    nothing_stored,
    overlapping_sets,
    prepare,
    preview,
    token_set,
)
from hippod.ingest.planner import plan_records
from hippod.model.digest import content_digest
from hippod.model.memory import Memory
from hippod.model.simjoin import jaccard
from hippod.model.tokenize import text_overlap

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def test_prepare_trims_drops_cuts_and_tags() -> None:
    chunks = [
        Chunk("   short   "),  # 5 chars after trim: dropped, not counted
        Chunk("  exactly10!  ", ["sec"]),
        Chunk("x" * 999 + " " + "y" * 50),
        Chunk("a normal chunk", ["sec", "extra"]),
    ]
    out = prepare(chunks, ["imported", "claude"], ["extra", " mine ", ""])
    assert out.texts == ["exactly10!", "x" * 999, "a normal chunk"]  # the cut's trailing space trimmed
    assert out.truncated == [2]
    assert out.tags == [
        ["imported", "claude", "sec", "extra", "mine"],
        ["imported", "claude", "extra", "mine"],
        ["imported", "claude", "sec", "extra", "mine"],
    ]
    assert len(prepare([Chunk("z" * 1000)], [], []).truncated) == 0


def _stored(existing: list[str]) -> StoredDuplicates:
    """The store's side of the duplicate test when the store holds these texts, pair by pair."""
    sets = [token_set(t) for t in existing]

    def found(chunks: Sequence[frozenset[str]], positions: Sequence[int]) -> set[int]:
        return {i for i in positions if any(jaccard(chunks[i], s) > 0.7 for s in sets)}

    return found


def _brute(texts: list[str], existing: list[str], rejected: set[str]) -> list[Verdict]:
    accepted = list(existing)
    out = []
    for text in texts:
        if any(text_overlap(text, other) > 0.7 for other in accepted):
            out.append(Verdict.DUPLICATE)
        elif content_digest(text) in rejected:
            out.append(Verdict.REJECTED)
        else:
            accepted.append(text)
            out.append(Verdict.NEW)
    return out


def test_judge_equals_the_exhaustive_rule_on_random_texts() -> None:
    rng = random.Random(7)
    words = [f"w{i}" for i in range(14)]

    def text() -> str:
        return " ".join(rng.sample(words, rng.randint(0, 6))) or "!!!!"

    for _ in range(40):
        existing = [text() for _ in range(15)]
        texts = [text() for _ in range(40)]
        rejected = {content_digest(t) for t in rng.sample(texts, 5)}
        digests = [content_digest(t) for t in texts]
        got = judge(texts, digests, _stored(existing), rejected)
        assert got == _brute(texts, existing, rejected)


def test_judge_duplicate_comes_before_rejected_and_rejected_is_not_accepted() -> None:
    texts = ["alpha beta gamma delta", "alpha beta gamma delta", "alpha beta gamma delta epsilon"]
    digests = [content_digest(t) for t in texts]
    got = judge(texts, digests, nothing_stored, {digests[0]})
    # The first is rejected, so it is not accepted: the second is rejected too, not a duplicate.
    assert got == [Verdict.REJECTED, Verdict.REJECTED, Verdict.NEW]
    assert judge(texts[:1], digests[:1], _stored(texts[:1]), {digests[0]}) == [Verdict.DUPLICATE]


def test_judge_threshold_is_strictly_above_point_seven() -> None:
    base = "one two three four five six seven eight nine ten"
    seven_of_ten = "one two three four five six seven x1 x2 x3"  # 7 / 13
    nine_of_ten = "one two three four five six seven eight nine"  # 9 / 10 = 0.9
    got = judge([seven_of_ten, nine_of_ten], ["d1", "d2"], _stored([base]), set())
    assert got == [Verdict.NEW, Verdict.DUPLICATE]


def test_overlapping_finds_late_arrivals() -> None:
    texts = [token_set("alpha beta gamma"), token_set("other words here")]
    assert overlapping_sets(texts, [token_set("alpha beta gamma")]) == {0}
    assert overlapping_sets([token_set("alpha")], []) == set()


def test_preview_collapses_whitespace_and_cuts() -> None:
    assert preview("a\n  b\tc") == "a b c"
    assert preview("x" * 100) == "x" * 80


def _export(records: list[dict[str, object]], hippod: bool = True) -> bytes:
    doc: dict[str, object] = {"memories": records}
    if hippod:
        doc["hippod_version"] = "0.1.0"
    return json.dumps(doc).encode()


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"{not json", "not valid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON (nested too deeply)"),
        (b'{"memories": 3}', "expected an export"),
        (b'"text"', "expected an export"),
        (b'[{"content": "ok content"}, 5]', "record 2 is not a JSON object"),
        (b'[{"tags": []}]', "record 1 has no content"),
        (b'[{"content": "   "}]', "record 1 has no content"),
        (b'[{"content": "ok content", "tags": [1]}]', "record 1: Expected `str`"),
        (b'[{"content": "ok content", "layer": "cortex"}]', "record 1: layer 'cortex'"),
        (b'[{"content": "ok content", "created": "yesterday"}]', "record 1: created 'yesterday'"),
        (b'[{"content": "ok content", "half_life_days": 0}]', "half_life_days must be more than 0"),
        (b'[{"content": "ok content", "retrieval_count": -1}]', "retrieval_count is negative"),
        # Values the store could not take, or would write back unreadable.
        (b'[{"content": "ok content", "retrieval_count": 10000000000000000000}]', "retrieval_count is too"),
        (b'[{"content": "ok content", "outcome_score": -10000000000000000000}]', "outcome_score is too"),
        (b'[{"content": "ok content", "created": "0001-01-01T00:00:00Z"}]', "created '0001-01-01"),
        (b'[{"content": "ok content", "last_retrieved": "0001-01-01T00:00:00+05:00"}]', "last_retrieved"),
    ],
)
def test_parse_export_errors_name_the_problem(data: bytes, problem: str) -> None:
    with pytest.raises(FormatError, match=None) as info:
        parse_export(data)
    assert problem in str(info.value)


def test_parse_export_shapes() -> None:
    assert parse_export(_export([{"content": "x" * 2000}])).hippod is True
    original = parse_export(b'[{"content": "bare array record"}]')
    assert original.hippod is False and original.records[0].content == "bare array record"
    assert len(parse_export(_export([{"content": "one two"}], hippod=False)).records) == 1


@pytest.mark.parametrize(
    ("half_life", "count", "source", "legacy"),
    [
        (7, 0, "cli", True),
        (14, 0, "cli", True),  # an error on the old base
        (14.5, 0, "cli", False),
        (20, 3, "cli", True),  # 14 + 2 x 3
        (22, 3, "cli", False),
        (90, 0, "decision", True),
        (96, 3, "decision", True),
        (96, 3, "cli", False),
        (365, 0, "decision", False),
    ],
)
def test_legacy_base_rule(half_life: float, count: int, source: str, legacy: bool) -> None:
    record = Record(content="c", half_life_days=half_life, retrieval_count=count, source=source)
    assert is_legacy_base(record) is legacy


def _make(record: Record, *, original: bool) -> Memory:
    return record_memory(
        record,
        memory_id="mem_new",
        tenant="t1",
        now=NOW,
        default_half_life=365,
        project="proj",
        original=original,
    )


def test_record_memory_keeps_fields_and_flags_only_original_exports() -> None:
    record = parse_export(
        _export(
            [
                {
                    "id": "mem_old",
                    "content": "Old base record",
                    "tags": ["error", "x"],
                    "half_life_days": 7,
                    "created": "2025-01-02T03:04:05Z",
                    "retrieval_count": 0,
                }
            ],
            hippod=False,
        )
    ).records[0]
    memory = _make(record, original=True)
    assert memory.legacy_base is True
    assert memory.created == memory.valid_from == memory.last_retrieved == "2025-01-02T03:04:05.000Z"
    assert memory.emotional_valence == "negative"  # from the error tag when the record has none
    assert memory.source == "import:json" and memory.origin_project == "proj"
    assert memory.id == "mem_new" and memory.tenant_id == "t1"
    assert _make(record, original=False).legacy_base is False
    fresh = _make(Record(content="no half-life", tags=["error"]), original=True)
    assert (
        fresh.half_life_days == 730
        and fresh.legacy_base is False
        and fresh.created == "2026-03-01T00:00:00.000Z"
    )


def test_plan_records_supersede_chains_follow_their_replacement() -> None:
    records = [
        {"id": "a", "content": "The staging database runs Postgres 13", "superseded_by": "b"},
        {"id": "b", "content": "The staging database runs Postgres 14", "superseded_by": "c"},
        {"id": "c", "content": "The staging database runs Postgres 16"},
        {"id": "d", "content": "Deploys happen on Tuesdays", "superseded_by": "zzz"},
    ]
    counter = iter(range(100))

    def make(record: Record) -> Memory:
        return record_memory(
            record,
            memory_id=f"new{next(counter)}",
            tenant="default",
            now=NOW,
            default_half_life=365,
            project="",
            original=False,
        )

    plan = plan_records(parse_export(_export(records)), ["t"], nothing_stored, set(), make)
    assert [m.content[-2:] for m in plan.memories] == ["13", "14", "16", "ys"]
    by_end = {m.content[-2:]: m for m in plan.memories}
    assert by_end["13"].superseded_by == by_end["14"].id
    assert by_end["14"].superseded_by == by_end["16"].id
    assert by_end["16"].superseded_by is None and by_end["ys"].superseded_by is None
    assert all(m.tags == ["t"] for m in plan.memories)
    assert len(plan.rows) == 4
    # When the replacement is already in the store, its history is skipped with it.
    again = plan_records(
        parse_export(_export(records)), [], _stored([m.content for m in plan.memories[2:]]), set(), make
    )
    assert (len(again.memories), again.skipped) == (0, 4)


def test_render_markdown_layout() -> None:
    day1, day2 = "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z"
    memory = _make(Record(content="Body text here", tags=["a", "b"], created=day1), original=False)
    bare = _make(Record(content="No tags", created=day2, layer="semantic"), original=False)
    text = render_markdown([memory, bare], [0.5, 1.0])
    assert text == (
        f"### mem_new\n\nBody text here\n\n_episodic · observed · a, b · {day1} · strength 0.50_\n"
        f"\n### mem_new\n\nNo tags\n\n_semantic · observed · - · {day2} · strength 1.00_\n"
    )
