"""Sleep's pair join (model/pairjoin.py) finds exactly the pairs of the exact Jaccard join."""

from __future__ import annotations

import random

import numpy as np
import pytest

from hippod.model import pairjoin
from hippod.model.pairjoin import similar_pairs, token_sets
from hippod.model.simjoin import exact_pairs, jaccard
from hippod.model.tokenize import tokenize
from hippod.model.wordsets import TokenColumn, pairs


def _joined(
    sets: list[frozenset[str]], threshold: float, strict: bool, probe: list[bool] | None = None
) -> set:
    vocabulary: dict[str, int] = {}
    numbered = token_sets([[vocabulary.setdefault(t, len(vocabulary)) for t in s] for s in sets])
    flags = None if probe is None else np.array(probe, dtype=np.bool_)
    found = similar_pairs(numbered, np.arange(len(sets)), threshold, strict=strict, probe=flags)
    return {(int(i), int(j)) for i, j in found.tolist()}


# A third of the sets probed, as after a busy day, and a twentieth, as after a quiet one.
@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("probed", [0.3, 0.05])
def test_random_sets_give_the_exact_pairs(seed: int, probed: float) -> None:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(rng.choice([4, 12, 40, 150]))]
    sizes = [0, 1, 2, 3, 5, 8, 13, 30, 70, 100]
    sets = [
        frozenset(rng.sample(words, min(len(words), rng.choice(sizes)))) for _ in range(rng.randint(2, 90))
    ]
    probe = [rng.random() < probed for _ in sets]
    for threshold, strict in ((0.35, False), (0.5, False), (0.7, True), (1.0, False), (0.05, True)):
        expected = exact_pairs(sets, threshold, strict=strict)
        assert _joined(sets, threshold, strict) == expected
        assert _joined(sets, threshold, strict, probe) == {p for p in expected if probe[p[0]] or probe[p[1]]}


@pytest.mark.parametrize("seed", range(12))
def test_tokens_counted_a_few_at_a_time_give_the_exact_pairs(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A large store's tokens are counted a chunk at a time (RANK_CHUNK): here chunks of a few
    # tokens, whose bounds fall inside rows, between them and at empty ones, over a selection of the
    # rows out of their order.
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(rng.choice([6, 30, 120]))]
    sets = [
        frozenset(rng.sample(words, min(len(words), rng.choice([0, 1, 3, 5, 9, 20]))))
        for _ in range(rng.randint(20, 70))
    ]
    sets += [s - {min(s, default="")} | {rng.choice(words)} for s in rng.sample(sets, 10)]  # edited copies
    vocabulary: dict[str, int] = {}
    numbered = token_sets([[vocabulary.setdefault(t, len(vocabulary)) for t in s] for s in sets])
    rows = rng.sample(range(len(sets)), k=2 * len(sets) // 3)
    found = exact_pairs([sets[k] for k in rows], 0.35)
    expected = sorted((min(rows[a], rows[b]), max(rows[a], rows[b])) for a, b in found)
    assert expected
    monkeypatch.setattr(pairjoin, "RANK_CHUNK", rng.choice([1, 2, 3, 7]))
    assert similar_pairs(numbered, np.array(rows), 0.35).tolist() == [list(p) for p in expected]


@pytest.mark.parametrize("chunk", [1, 2, 3, 1 << 20])
def test_tokens_rank_rarest_first_among_the_selected_sets(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The ranks only order the prefixes (any order finds the same pairs), so they are checked here.
    monkeypatch.setattr(pairjoin, "RANK_CHUNK", chunk)
    held = [[5, 1, 9], [], [1, 2], [9, 1], [7, 12], [], [2, 1, 5, 9], [0]]
    selected = [6, 0, 2, 1, 3, 7]  # out of order, one empty set in, the sets holding 7 and 12 out
    ranked = pairjoin._ranked(token_sets(held), np.array(selected))
    vocabulary = max(t for k in selected for t in held[k]) + 2  # the empty sets' token is the last
    count = [sum(t in held[k] for k in selected) for t in range(vocabulary - 1)]
    count.append(sum(not held[k] for k in selected))
    order = sorted(range(vocabulary), key=lambda t: (count[t], t))
    assert ranked.vocabulary == vocabulary
    assert ranked.rank.tolist() == [order.index(t) for t in range(vocabulary)]
    assert ranked.sizes.tolist() == [max(1, len(held[k])) for k in selected]


def test_two_empty_sets_overlap_fully_and_nothing_else() -> None:
    sets = [frozenset(), frozenset({"a"}), frozenset(), frozenset({"a", "b"})]
    assert _joined(sets, 0.35, False) == {(0, 2), (1, 3)}
    assert _joined(sets, 0.5, True) == {(0, 2)}


def test_pairs_right_at_the_threshold() -> None:
    # 7 of 20 tokens is exactly 0.35: kept by >= and, at 0.35, dropped by >.
    a = frozenset(f"t{i}" for i in range(7)) | frozenset(f"a{i}" for i in range(7))
    b = frozenset(f"t{i}" for i in range(7)) | frozenset(f"b{i}" for i in range(6))
    assert jaccard(a, b) == 0.35
    assert _joined([a, b], 0.35, False) == {(0, 1)}
    assert _joined([a, b], 0.35, True) == set()


def test_a_zipf_store_of_texts_gives_the_exact_pairs() -> None:
    # Texts drawn from a skewed vocabulary with common glue words, as real notes are, plus edited
    # copies, so that every threshold has pairs to find and many near misses to reject.
    rng = random.Random(5)
    vocabulary = [f"word{i}" for i in range(600)]
    weights = [1 / (rank + 5) for rank in range(len(vocabulary))]
    glue = "the to of and in for is on with when it this that not from".split()
    texts: list[str] = []
    for _ in range(1500):
        words = [
            rng.choice(glue) if rng.random() < 0.35 else w for w in rng.choices(vocabulary, weights, k=18)
        ]
        texts.append(" ".join(words))
    for _ in range(150):
        words = rng.choice(texts).split()
        words[rng.randrange(len(words))] = rng.choice(vocabulary)
        texts.append(" ".join(words + rng.sample(vocabulary, rng.randint(0, 6))))
    sets = [frozenset(tokenize(t)) for t in texts]
    column = TokenColumn().extend(tokenize(t) for t in texts)
    for threshold, strict in ((0.35, False), (0.5, False), (0.7, True)):
        expected = exact_pairs(sets, threshold, strict=strict)
        assert expected, threshold
        assert set(pairs(column, range(len(texts)), threshold, strict=strict)) == expected
    for every in (3, 40):  # a third of the texts probed, and a fortieth
        probe = [k % every == 0 for k in range(len(texts))]
        for threshold, strict in ((0.35, False), (0.7, True)):
            expected = {p for p in exact_pairs(sets, threshold, strict=strict) if probe[p[0]] or probe[p[1]]}
            assert expected, (every, threshold)
            assert set(pairs(column, range(len(texts)), threshold, strict=strict, probe=probe)) == expected
    some = list(range(0, len(texts), 3))
    assert set(pairs(column, some, 0.35)) == {p for p in exact_pairs(sets, 0.35) if p[0] % 3 == p[1] % 3 == 0}


def test_a_join_that_probes_nothing_finds_nothing() -> None:
    same = [frozenset({"a", "b"})] * 20
    assert _joined(same, 0.35, False, [False] * 20) == set()
    assert _joined(same, 0.35, False, [k == 7 for k in range(20)]) == {
        (min(k, 7), max(k, 7)) for k in range(20) if k != 7
    }


def test_thresholds_outside_the_open_unit_interval_are_refused() -> None:
    with pytest.raises(ValueError):
        _joined([frozenset({"a"}), frozenset({"a"})], 0.0, False)
