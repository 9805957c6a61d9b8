"""The composite recall score and its multipliers (recall.md §5)."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import pytest

from hippod.base import clock
from hippod.model.strength import strength
from hippod.model.tokenize import tokenize
from hippod.recall import bm25
from hippod.recall import score as sc
from hippod.recall.bm25 import bm25_scores
from hippod.store.records import TermStats

NOW = clock.parse_iso("2026-06-01T00:00:00Z")


def _ago(days: float) -> str:
    return clock.iso(NOW - timedelta(days=days))


def _scored(memory: Any, score: float) -> sc.Scored:
    return sc.Scored(
        memory=memory, score=score, bm25=score, base=score, strength=1.0, retrieved_days=0.0, matched=[]
    )


# --- multipliers ---------------------------------------------------------------------------------


def test_outcome_multiplier() -> None:
    assert sc.outcome_multiplier(0, 0) == 1.0
    assert round(sc.outcome_multiplier(1, 0), 3) == 1.069
    assert round(sc.outcome_multiplier(0, 3), 3) == 0.864
    assert round(sc.outcome_multiplier(4, 3), 3) == 1.069  # net, not gross
    assert sc.outcome_multiplier(2, 2) == 1.0
    assert sc.outcome_multiplier(1, 0) == pytest.approx(1 + 0.15 * math.tanh(0.5), abs=1e-12)


def test_outcome_multiplier_stays_inside_its_clip() -> None:
    for pos, neg in [(100, 0), (0, 100), (7, 0), (0, 7)]:
        assert 0.85 <= sc.outcome_multiplier(pos, neg) <= 1.15
    assert sc.outcome_multiplier(100, 0) == pytest.approx(1.15, abs=1e-9)
    assert sc.outcome_multiplier(0, 100) == pytest.approx(0.85, abs=1e-9)


@pytest.mark.parametrize(
    ("tags", "active", "expected"),
    [
        (["scope:billing"], "billing", 1.5),
        (["scope:ops", "scope:billing"], "billing", 1.5),
        (["scope:ops"], "billing", 0.5),
        (["deploy"], "billing", 1.0),
        ([], "billing", 1.0),
        (["scope:ops"], None, 1.0),
        (["scope:ops"], "", 1.0),
        (["billing"], "billing", 1.0),
    ],
)
def test_scope_multiplier(tags: list[str], active: str | None, expected: float) -> None:
    assert sc.scope_multiplier(tags, active) == expected


@pytest.mark.parametrize(
    ("memory_tags", "cwd_tags", "expected"),
    [
        (["path:etl", "path:jobs", "error"], ["path:etl", "path:jobs"], 1.3),
        (["path:a", "path:b", "x"], ["path:b", "path:c", "path:d"], 1 + 0.3 * 1 / 3),
        (["path:a"], ["path:a", "path:b", "path:c", "path:d"], 1 + 0.3 * 1 / 4),
        (["path:a", "path:b", "path:c"], ["path:c"], 1 + 0.3 * 1 / 3),
        (["path:a"], ["path:b"], 1.0),
        (["error", "deploy"], ["path:etl"], 1.0),
        (["path:etl"], [], 1.0),
        ([], [], 1.0),
    ],
)
def test_path_multiplier(memory_tags: list[str], cwd_tags: list[str], expected: float) -> None:
    assert sc.path_multiplier(memory_tags, cwd_tags) == pytest.approx(expected, abs=1e-12)


def test_strength_recency_decision_extracted() -> None:
    assert sc.strength_multiplier(0.8) == pytest.approx(0.9)
    assert sc.strength_multiplier(0.0) == 0.5
    assert sc.strength_multiplier(1.0) == 1.0
    assert sc.recency_multiplier(0) == 1.0
    assert sc.recency_multiplier(30) == pytest.approx(0.8 + 0.2 / math.e, abs=1e-12)
    assert round(sc.recency_multiplier(30), 4) == 0.8736
    assert sc.recency_multiplier(10_000) == pytest.approx(0.8, abs=1e-9)
    assert sc.decision_multiplier(["decision", "path:x"]) == 1.2
    assert sc.decision_multiplier(["decisions"]) == 1.0
    assert sc.extracted_multiplier(["extracted"]) == 1.3
    assert sc.extracted_multiplier([]) == 1.0


@pytest.mark.parametrize(
    ("tokens", "direction"),
    [
        (["what", "changed", "recently"], 1),
        (["latest", "deploy"], 1),
        (["last"], 1),
        (["newest"], 1),
        (["current"], 1),
        (["today"], 1),
        (["first", "deploy"], -1),
        (["earliest"], -1),
        (["oldest"], -1),
        (["initially"], -1),
        (["originally"], -1),
        (["deploy", "failed"], 0),
        ([], 0),
    ],
)
def test_temporal_direction(tokens: list[str], direction: int) -> None:
    assert sc.temporal_direction(tokens) == direction


def test_temporal_multiplier() -> None:
    assert sc.temporal_multiplier(1, 1.0) == pytest.approx(1.2)
    assert sc.temporal_multiplier(1, 0.0) == pytest.approx(0.8)
    assert sc.temporal_multiplier(1, 0.5) == pytest.approx(1.0)
    assert sc.temporal_multiplier(-1, 0.0) == pytest.approx(1.2)
    assert sc.temporal_multiplier(-1, 1.0) == pytest.approx(0.8)
    assert sc.temporal_multiplier(0, 0.0) == 1.0
    assert sc.temporal_multiplier(0, 1.0) == 1.0


# --- the worked example ----------------------------------------------------------------------------


def test_worked_example() -> None:
    query_tokens = 2
    base = 2.4 / query_tokens
    tags = ["decision"]
    multipliers = [
        sc.strength_multiplier(0.8),
        sc.recency_multiplier(30),
        sc.decision_multiplier(tags),
        sc.path_multiplier(tags, []),
        sc.outcome_multiplier(0, 0),
        sc.scope_multiplier(tags, None),
        sc.extracted_multiplier(tags),
        sc.temporal_multiplier(sc.temporal_direction(["nightly", "export"]), 0.5),
    ]
    assert base == 1.2
    assert multipliers[0] == pytest.approx(0.9)
    assert round(multipliers[1], 4) == 0.8736
    assert multipliers[2:] == [1.2, 1.0, 1.0, 1.0, 1.0, 1.0]
    score = base * math.prod(multipliers)
    assert round(score, 3) == 1.132
    assert round(score * 1.2, 3) == 1.359


# --- score_candidates end to end -------------------------------------------------------------------


def _doc_tokens(memory: Any) -> list[str]:
    return tokenize(memory.content + " " + " ".join(memory.tags))


def test_score_candidates_combines_bm25_and_multipliers(make_memory: Any) -> None:
    hit = make_memory(
        "nightly export times out",
        tags=["decision", "path:exporter"],
        created=_ago(30),
        last_retrieved=_ago(100),
        outcome_positive=1,
    )
    other = make_memory("nightly backup ran", created=_ago(2), last_retrieved=_ago(2))
    miss = make_memory("unrelated words only", created=_ago(1), last_retrieved=_ago(1))
    candidates = [hit, other, miss]
    docs = [_doc_tokens(m) for m in candidates]
    query = tokenize("nightly export")
    ctx = sc.ScoreContext(now=NOW, cwd_path_tags=["path:exporter", "path:jobs"])
    results = sc.score_candidates(query, candidates, docs, ctx)

    assert [r.memory.id for r in results] == [hit.id, other.id]  # bm25 0 is dropped
    first = results[0]
    raw = bm25_scores(query, docs)
    assert first.bm25 == pytest.approx(raw[0])
    assert first.base == pytest.approx(raw[0] / 2)
    live = strength(
        days=100, half_life_days=365, pos=1, neg=0, retrieval_count=0, valence="neutral", pinned=False
    )
    assert first.strength == pytest.approx(live)
    expected = {
        "strength": 0.5 + 0.5 * live,
        "recency": 0.8 + 0.2 / math.e,
        "decision": 1.2,
        "path": 1 + 0.3 * 1 / 2,
        "outcome": 1 + 0.15 * math.tanh(0.5),
        "scope": 1.0,
        "extracted": 1.0,
        "temporal": 1.0,
        # "nightly export" stands as in the query: the pair's mean IDF x (ordered + window shares).
        "proximity": 1 + (bm25.idf(3, 2) + bm25.idf(3, 1)) / 2 * (0.5 * 0.5 + 0.25 * 0.5) / raw[0],
    }
    assert first.multipliers == pytest.approx(expected)
    assert first.score == pytest.approx(first.base * math.prod(expected.values()))
    assert first.matched == ["nightly", "export"]
    assert results[1].matched == ["nightly"]


def test_score_candidates_reads_each_memory_as_its_own_formulas_do(make_memory: Any) -> None:
    # Memories that share timestamps and tag lists (the scoring works those out once per distinct
    # value) get, to the bit, what strength_at and each multiplier give them alone.
    shared = _ago(40)
    candidates = [
        make_memory("deploy one", tags=["path:exporter"], created=shared, last_retrieved=shared),
        make_memory("deploy two", tags=["path:exporter"], created=_ago(90), last_retrieved=shared),
        make_memory(
            "deploy three",
            tags=["decision", "scope:billing", "extracted"],
            created=shared,
            last_retrieved=_ago(3),
            outcome_positive=1,
            outcome_negative=3,
            retrieval_count=4,
            emotional_valence="negative",
        ),
        make_memory(
            "deploy four", tags=["scope:ops"], created=_ago(200), last_retrieved=_ago(1), pinned=True
        ),
    ]
    ctx = sc.ScoreContext(now=NOW, cwd_path_tags=["path:exporter"], active_scope="billing", loss_aversion=1.5)
    results = sc.score_candidates(["deploy"], candidates, [_doc_tokens(m) for m in candidates], ctx)
    assert [r.memory.id for r in results] == [m.id for m in candidates]
    for memory, result in zip(candidates, results, strict=True):
        parts = memory.strength_at(NOW, 1.5)
        assert (result.strength, result.retrieved_days) == (parts.strength, parts.days)
        assert result.multipliers == {
            "strength": sc.strength_multiplier(parts.strength),
            "recency": sc.recency_multiplier(clock.days_between(memory.created, NOW)),
            "decision": sc.decision_multiplier(memory.tags),
            "path": sc.path_multiplier(memory.tags, ctx.cwd_path_tags),
            "outcome": sc.outcome_multiplier(memory.outcome_positive, memory.outcome_negative),
            "scope": sc.scope_multiplier(memory.tags, "billing"),
            "extracted": sc.extracted_multiplier(memory.tags),
            "temporal": 1.0,
        }
        assert result.score == result.base * math.prod(result.multipliers.values())


def test_score_candidates_temporal_positions(make_memory: Any) -> None:
    old = make_memory("deploy notes alpha", created=_ago(300), last_retrieved=_ago(0))
    mid = make_memory("deploy notes beta", created=_ago(200), last_retrieved=_ago(0))
    new = make_memory("deploy notes gamma", created=_ago(100), last_retrieved=_ago(0))
    candidates = [old, mid, new]
    docs = [_doc_tokens(m) for m in candidates]
    ctx = sc.ScoreContext(now=NOW, cwd_path_tags=[])
    latest = {
        r.memory.id: r.multipliers["temporal"]
        for r in sc.score_candidates(tokenize("latest deploy"), candidates, docs, ctx)
    }
    assert latest == pytest.approx({old.id: 0.8, mid.id: 1.0, new.id: 1.2})
    first = {
        r.memory.id: r.multipliers["temporal"]
        for r in sc.score_candidates(tokenize("first deploy"), candidates, docs, ctx)
    }
    assert first == pytest.approx({old.id: 1.2, mid.id: 1.0, new.id: 0.8})


def test_score_candidates_temporal_all_equal_is_middle(make_memory: Any) -> None:
    a = make_memory("deploy alpha", created=_ago(5))
    b = make_memory("deploy beta", created=_ago(5))
    docs = [_doc_tokens(m) for m in (a, b)]
    ctx = sc.ScoreContext(now=NOW, cwd_path_tags=[])
    results = sc.score_candidates(tokenize("latest deploy"), [a, b], docs, ctx)
    assert [r.multipliers["temporal"] for r in results] == pytest.approx([1.0, 1.0])


def test_score_candidates_scope_and_extracted(make_memory: Any) -> None:
    mine = make_memory("billing cache", tags=["scope:billing", "extracted"], created=_ago(0))
    theirs = make_memory("billing cache", tags=["scope:ops"], created=_ago(0))
    docs = [_doc_tokens(m) for m in (mine, theirs)]
    ctx = sc.ScoreContext(now=NOW, cwd_path_tags=[], active_scope="billing")
    by_id = {r.memory.id: r for r in sc.score_candidates(["billing"], [mine, theirs], docs, ctx)}
    assert by_id[mine.id].multipliers["scope"] == 1.5
    assert by_id[mine.id].multipliers["extracted"] == 1.3
    assert by_id[theirs.id].multipliers["scope"] == 0.5


def test_score_candidates_empty_inputs(make_memory: Any) -> None:
    ctx = sc.ScoreContext(now=NOW, cwd_path_tags=[])
    assert sc.score_candidates(["x1"], [], [], ctx) == []
    memory = make_memory("x1 here")
    assert sc.score_candidates([], [memory], [_doc_tokens(memory)], ctx) == []


# --- context: neighbours stored next to a match ----------------------------------------------------


def test_neighbour_lift_takes_the_best_adjacent_row_of_the_same_session() -> None:
    shares = [{"a": 4.0}, {"b": 1.0}, {"c": 2.0}, {"a": 3.0}, {"b": 5.0}]
    present = [{"a"}, {"b"}, {"c"}, {"a"}, {"b"}]
    rowids = [10, 11, 12, 20, 21]
    sessions = [None, None, None, "s1", "s2"]
    created = [_ago(0)] * 5
    # 11 sees 10 and 12; 10 and 12 see 11; 20 and 21 are adjacent but from different sessions.
    assert sc.neighbour_lift(shares, present, rowids, sessions, created) == [1.0, 4.0, 1.0, 0.0, 0.0]
    assert sc.neighbour_lift([], [], [], [], []) == []


def test_neighbour_lift_counts_only_terms_the_memory_lacks() -> None:
    # Notes that repeat the same query words lift each other by nothing; a neighbour that brings
    # a query word the memory lacks lifts it by that word's share only.
    shares = [{"db": 2.0, "billing": 1.0}, {"db": 2.0, "billing": 1.5}, {"billing": 0.5}]
    present = [{"db", "billing", "x"}, {"db", "billing", "y"}, {"billing", "z"}]
    assert sc.neighbour_lift(shares, present, [1, 2, 3], [None] * 3, [_ago(0)] * 3) == [0.0, 0.0, 2.0]


def test_neighbours_count_only_within_the_time_window() -> None:
    window = sc.CONTEXT_WINDOW_SECONDS
    start = NOW - timedelta(days=1)
    created = [clock.iso(start + timedelta(seconds=x)) for x in (0, window, 2 * window + 1)]
    shares = [{"a": 1.0}, {"b": 2.0}, {"c": 3.0}]
    present = [{"a"}, {"b"}, {"c"}]
    # 0 and 1 are exactly one window apart (counted); 1 and 2 are one second more (not counted).
    assert sc.neighbour_lift(shares, present, [1, 2, 3], [None] * 3, created) == [2.0, 1.0, 0.0]


def test_context_multiplier_adds_a_share_of_the_neighbour() -> None:
    assert sc.context_multiplier(2.0, 0.0) == 1.0
    assert sc.context_multiplier(0.0, 3.0) == 1.0
    assert sc.context_multiplier(2.0, 3.0) == pytest.approx(1.0 + sc.CONTEXT_WEIGHT * 1.5)
    # bm25 x multiplier = bm25 + CONTEXT_WEIGHT x the lift
    assert 2.0 * sc.context_multiplier(2.0, 3.0) == pytest.approx(2.0 + sc.CONTEXT_WEIGHT * 3.0)


def test_score_candidates_context_lifts_the_reply_to_a_match(make_memory: Any) -> None:
    question = make_memory("which database did we pick for the billing service")
    reply = make_memory("postgres, because billing needs transactions")
    far = make_memory("billing dashboard colours")
    candidates = [question, reply, far]
    docs = [_doc_tokens(m) for m in candidates]
    query = tokenize("billing database")
    ctx = sc.ScoreContext(now=NOW, cwd_path_tags=[])
    plain = {r.memory.id: r for r in sc.score_candidates(query, candidates, docs, ctx)}
    assert all("context" not in r.multipliers for r in plain.values())
    with_rows = {r.memory.id: r for r in sc.score_candidates(query, candidates, docs, ctx, rowids=[1, 2, 7])}
    raw = bm25_scores(query, docs)
    lifted = with_rows[reply.id]
    assert lifted.bm25 == pytest.approx(raw[1])
    # The question brings "database", which the reply lacks; "billing" they share.
    database_share = bm25_scores(["database"], docs)[0]
    assert lifted.multipliers["context"] == pytest.approx(1 + sc.CONTEXT_WEIGHT * database_share / raw[1])
    assert "context" not in with_rows[question.id].multipliers  # the reply adds no word it lacks
    assert lifted.score == pytest.approx(plain[reply.id].score * lifted.multipliers["context"])
    assert lifted.score > plain[far.id].score == with_rows[far.id].score
    assert "context" not in with_rows[far.id].multipliers


def test_store_statistics_keep_the_term_that_chose_the_candidates_rare(make_memory: Any) -> None:
    # Every candidate holds "fitbit" because the store's few rows that hold it were chosen; "long" is
    # in most of the store. By the candidates' IDF alone "fitbit" counts for almost nothing and the
    # memory that merely repeats "long" wins; with the store's statistics the one about the fitbit does.
    about = make_memory("fitbit fitbit strap")
    loose = make_memory("fitbit long long long walk")
    others = [make_memory(f"fitbit note {i}") for i in range(3)]
    candidates = [about, loose, *others]
    docs = [_doc_tokens(m) for m in candidates]
    query = ["long", "fitbit"]
    ctx = sc.ScoreContext(now=NOW, cwd_path_tags=[])

    def top(stats: TermStats | None) -> str:
        ranked = sorted(sc.score_candidates(query, candidates, docs, ctx, stats=stats), key=sc.sort_key)
        return ranked[0].memory.id

    assert top(None) == loose.id
    assert top(TermStats(10_000, {"fitbit": 5, "long": 4_000})) == about.id


def test_idf_is_the_mean_of_the_store_and_the_candidates() -> None:
    found = [{"a": 1}, {"a": 2, "b": 1}, {}]
    assert bm25.term_idfs(["a", "b"], found) == {"a": bm25.idf(3, 2), "b": bm25.idf(3, 1)}
    mixed = bm25.term_idfs(["a", "b"], found, 100, {"a": 2, "b": 50})
    assert mixed["a"] == pytest.approx((bm25.idf(100, 2) + bm25.idf(3, 2)) / 2)
    assert mixed["b"] == pytest.approx((bm25.idf(100, 50) + bm25.idf(3, 1)) / 2)
    # Statistics read before a write that the candidates already see: the larger counts are used.
    stale = bm25.term_idfs(["a"], found, 1, {"a": 1})
    assert stale["a"] == pytest.approx(bm25.idf(3, 2))
    # A term counted in more rows than the row count read a moment before: never below zero.
    assert bm25.term_idfs(["a"], found, 1, {"a": 5})["a"] == pytest.approx(
        (bm25.idf(5, 5) + bm25.idf(3, 2)) / 2
    )
    assert bm25.idf(5, 5) > 0


# --- ordering and post-sort ------------------------------------------------------------------------


def test_sort_key_tie_break(make_memory: Any) -> None:
    top = _scored(make_memory("zzz", id="mem_000000000009"), 2.0)
    b = _scored(make_memory("beta", id="mem_000000000001"), 1.0)
    a3 = _scored(make_memory("alpha", id="mem_000000000003"), 1.0)
    a1 = _scored(make_memory("alpha", id="mem_000000000001"), 1.0)
    upper = _scored(make_memory("Zulu", id="mem_000000000002"), 1.0)  # "Z" < "a" in code points
    low = _scored(make_memory("aaa", id="mem_000000000000"), 0.5)
    ordered = sorted([low, b, a3, top, upper, a1], key=sc.sort_key)
    assert ordered == [top, upper, a1, a3, b, low]


def test_drop_extracted_sources(make_memory: Any) -> None:
    source = make_memory("long session transcript about the export")
    fact = make_memory("the export runs nightly", tags=["extracted"], extracted_from=source.id)
    other = make_memory("unrelated")
    items = [_scored(fact, 2.0), _scored(source, 1.5), _scored(other, 1.0)]
    kept = sc.drop_extracted_sources(items)
    assert [i.memory.id for i in kept] == [fact.id, other.id]


def test_drop_extracted_sources_keeps_list_when_source_absent(make_memory: Any) -> None:
    fact = make_memory("the export runs nightly", tags=["extracted"], extracted_from="mem_absent000000")
    other = make_memory("unrelated")
    items = [_scored(fact, 2.0), _scored(other, 1.0)]
    assert sc.drop_extracted_sources(items) == items
    assert sc.drop_extracted_sources([]) == []
