"""Merging project-store and global-store results (recall.md §6)."""

from __future__ import annotations

from typing import Any

import pytest

from hippod.recall.merge import merge_results
from hippod.recall.score import Scored


def _scored(memory: Any, score: float) -> Scored:
    return Scored(
        memory=memory, score=score, bm25=score, base=score, strength=1.0, retrieved_days=0.0, matched=[]
    )


def test_local_bump_and_local_copy_wins(make_memory: Any) -> None:
    local = _scored(make_memory("Staging deploy failed"), 1.0)
    dup = _scored(make_memory("  staging DEPLOY failed \n"), 1.19)
    other = _scored(make_memory("Global only lesson"), 0.5)
    merged = merge_results([local], [dup, other], 1.2)
    assert merged == [local, other]
    assert local.score == pytest.approx(1.2)
    assert local.multipliers["local"] == 1.2
    assert local.source == "local"
    assert other.source == "global"
    assert other.score == 0.5
    assert "local" not in other.multipliers


def test_local_copy_wins_even_when_global_scores_higher(make_memory: Any) -> None:
    local = _scored(make_memory("same text"), 0.1)
    dup = _scored(make_memory("Same Text"), 9.0)
    merged = merge_results([local], [dup], 1.2)
    assert [m.memory.id for m in merged] == [local.memory.id]
    assert merged[0].source == "local"


def test_result_is_sorted_by_score_then_content_then_id(make_memory: Any) -> None:
    l1 = _scored(make_memory("bravo", id="mem_00000000000b"), 1.0)  # -> 1.2
    l2 = _scored(make_memory("delta", id="mem_00000000000d"), 0.1)  # -> 0.12
    g1 = _scored(make_memory("alpha", id="mem_00000000000a"), 2.0)
    g2 = _scored(make_memory("charlie", id="mem_00000000000c"), 1.2)
    merged = merge_results([l1, l2], [g1, g2], 1.2)
    # bravo (1.0 x 1.2) and charlie (1.2) tie; content order puts bravo first.
    assert merged == [g1, l1, g2, l2]
    keys = [(-m.score, m.memory.content, m.memory.id) for m in merged]
    assert keys == sorted(keys)


def test_tie_broken_by_content(make_memory: Any) -> None:
    g1 = _scored(make_memory("zeta"), 1.0)
    g2 = _scored(make_memory("eta"), 1.0)
    merged = merge_results([], [g1, g2], 1.2)
    assert [m.memory.content for m in merged] == ["eta", "zeta"]


def test_equal_sources_applies_no_bump(make_memory: Any) -> None:
    local = _scored(make_memory("local one"), 1.0)
    merged = merge_results([local], [], 1.0)
    assert merged[0].score == 1.0
    assert "local" not in merged[0].multipliers
    assert merged[0].source == "local"


def test_dedupe_uses_first_200_characters(make_memory: Any) -> None:
    prefix = "x" * 200
    local = _scored(make_memory(prefix + " local tail"), 1.0)
    same_prefix = _scored(make_memory(prefix.upper() + " different global tail"), 1.0)
    differs_early = _scored(make_memory("y" + prefix), 1.0)
    differs_at_199 = _scored(make_memory("x" * 199 + "z"), 1.0)
    merged = merge_results([local], [same_prefix, differs_early, differs_at_199], 1.2)
    assert [m.memory.id for m in merged] == [
        local.memory.id,
        differs_at_199.memory.id,
        differs_early.memory.id,
    ]


def test_duplicates_within_one_list_are_dropped(make_memory: Any) -> None:
    first = _scored(make_memory("repeat me"), 1.0)
    second = _scored(make_memory("REPEAT ME"), 2.0)
    merged = merge_results([], [first, second], 1.2)
    assert merged == [first]
