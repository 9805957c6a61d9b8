"""Packing memories into a budget: whole ones in rank order, then one cut to what is left, with a
marker naming it and its full size; --min-results keeps memories, never past the budget."""

from __future__ import annotations

import random

from hippod.recall import cut
from hippod.recall.budget import tokens
from hippod.recall.pack import Packed, pack


def _block(memory_id: str, text: str) -> str:
    """A stand-in for a surface's printed item: a header line, then the text."""
    return f"--- {memory_id} [episodic]\n{text}\n\n"


def _pack(contents: list[str], budget: int, **options: int | None) -> Packed:
    ids = [f"mem_{n:012d}" for n in range(len(contents))]

    def cost(index: int, text: str) -> int:
        return tokens(_block(ids[index], text))

    return pack(ids, contents, cost, budget, **options)  # type: ignore[arg-type]


def _printed(contents: list[str], packed: Packed) -> str:
    return "".join(_block(f"mem_{i:012d}", packed.cut.get(i, contents[i])) for i in packed.taken)


def test_the_marker_names_the_memory_its_size_and_how_to_read_it_whole() -> None:
    assert cut.marker("mem_abc123", 888_000) == (
        "[… cut to fit the budget: mem_abc123 is 888,000 characters (222,000 tokens); "
        "`hippoctl inspect mem_abc123` shows it whole]"
    )


def test_a_cut_ends_at_a_word_and_carries_the_marker() -> None:
    text = "alpha beta gamma delta"
    assert cut.cut_text(text, "m1", 13) == "alpha beta\n" + cut.marker("m1", 22)
    assert cut.cut_text(text, "m1", 0) == cut.marker("m1", 22)
    assert cut.cut_text("x" * 100, "m1", 60) == "x" * 60 + "\n" + cut.marker("m1", 100)


def test_fit_is_the_longest_cut_that_fits_or_none() -> None:
    text = "word " * 2000
    got = cut.fit(text, "m1", lambda shown: len(shown) <= 1000)
    assert got is not None and len(got) <= 1000 and len(got) > 1000 - cut.WORD_REACH - 5
    assert got.endswith(cut.marker("m1", len(text)))
    # Fewer than LEAST_TEXT characters of text would fit: not worth a cut, unless least allows it.
    small = len(cut.marker("m1", len(text))) + 50
    assert cut.fit(text, "m1", lambda shown: len(shown) <= small) is None
    assert cut.fit(text, "m1", lambda shown: len(shown) <= small, least=0) is not None


def test_an_oversized_only_result_kept_by_min_results_is_cut_to_the_budget() -> None:
    contents = ["x " * 444_000]
    packed = _pack(contents, 4000, reserved=20, min_results=1)
    assert packed.taken == [0] and list(packed.cut) == [0]
    assert packed.skipped_budget == 0
    assert packed.used <= 4000 and 20 + tokens(_printed(contents, packed)) <= 4000
    assert packed.used > 3900  # it fills what is left
    assert packed.cut[0].endswith(cut.marker("mem_000000000000", len(contents[0])))


def test_without_min_results_the_first_oversized_item_is_cut_into_what_the_whole_ones_leave() -> None:
    contents = ["big " * 10_000, "small one", "big " * 20_000, "another small"]
    packed = _pack(contents, 1000)
    assert packed.taken == [0, 1, 3] and list(packed.cut) == [0]
    assert packed.skipped_budget == 1 and packed.used <= 1000
    assert tokens(_printed(contents, packed)) <= 1000


def test_a_room_too_small_for_a_useful_cut_leaves_the_item_skipped() -> None:
    contents = ["a" * 300, "b" * 2000]
    packed = _pack(contents, 100 + 60)  # the first fills 81 tokens; 79 is too few for a cut
    assert packed.taken == [0] and packed.cut == {} and packed.skipped_budget == 1


def test_min_results_two_cuts_both_within_the_budget() -> None:
    contents = ["one " * 50_000, "two " * 50_000, "three " * 50_000]
    packed = _pack(contents, 2000, min_results=2)
    assert packed.taken == [0, 1] and set(packed.cut) == {0, 1}
    assert packed.skipped_budget == 1
    assert tokens(_printed(contents, packed)) <= packed.used <= 2000
    # The first is given the room the second does not need past its smallest cut.
    assert len(packed.cut[0]) > len(packed.cut[1])


def test_a_budget_too_small_for_a_marker_keeps_fewer_than_min_results() -> None:
    contents = ["x" * 5000, "y" * 5000]
    assert _pack(contents, 10, min_results=1).taken == []
    one = _pack(contents, 60, min_results=2)
    assert one.taken == [0] and one.used <= 60


def test_limit_is_kept_when_cutting() -> None:
    contents = ["small", "z" * 9000, "small too"]
    room = _pack(contents, 500, limit=3)
    assert room.taken == [0, 1, 2] and list(room.cut) == [1]
    full = _pack(contents, 500, limit=2)
    assert full.taken == [0, 2] and full.cut == {} and full.skipped_budget == 1
    assert _pack(contents, 500, limit=1).skipped_limit == 2


def test_the_budget_always_holds() -> None:
    rng = random.Random(3)
    for _ in range(300):
        contents = [
            rng.choice(["w", "word ", "line\n"]) * rng.choice([1, 30, 400, 5000, 60_000])
            for _ in range(rng.randint(0, 12))
        ]
        budget = rng.randint(0, 5000)
        reserved = rng.randint(0, 40)
        limit = rng.choice([None, None, 1, 3])
        packed = _pack(contents, budget, reserved=reserved, min_results=rng.choice([0, 1, 3]), limit=limit)
        if reserved <= budget:
            assert reserved + tokens(_printed(contents, packed)) <= packed.used <= budget
        assert len(packed.cut) <= 3
        assert limit is None or len(packed.taken) <= limit
        for index, text in packed.cut.items():
            assert f"mem_{index:012d} is {len(contents[index]):,} characters" in text
