"""The goal factor's weights and which goals on a stack lift (hippod/recall/goal_lift.py)."""

from __future__ import annotations

import pytest

from hippod.recall.goal_lift import GoalLift, lifting, stack_multiplier
from hippod.store.sqlite.goals import STORE_STACK, Goal


def _goal(n: int, tag: str, session: str = STORE_STACK) -> Goal:
    return Goal(n, session, tag, "active", None, "2026-01-01T00:00:00.000Z", None)


@pytest.mark.parametrize(("matched", "factor"), [(0, 1.0), (1, 2.0), (2, 2.5), (3, 3.0), (4, 3.0), (9, 3.0)])
def test_the_stack_lifts_2_then_half_more_each_up_to_3(matched: int, factor: float) -> None:
    assert stack_multiplier(matched) == factor


def test_the_top_three_of_each_stack_lift() -> None:
    stack = [_goal(1, "a"), _goal(2, "b"), _goal(3, "s", "s1"), _goal(4, "c"), _goal(5, "d")]
    assert [g.id for g in lifting(stack)] == [2, 3, 4, 5]


def test_a_tag_on_both_stacks_counts_once_and_goal_prefix_matches() -> None:
    lift = GoalLift(stack=(_goal(1, "db"), _goal(2, "db", "s1"), _goal(3, "ui")))
    assert lift.multiplier(["db"]) == 2.0
    assert lift.multiplier(["goal:db", "ui"]) == 2.5
    assert lift.multiplier(["dbx", "goal:"]) == 1.0
    assert [g.id for g in lift.goals_of(["goal:db"])] == [1, 2]


def test_an_explicit_goal_stands_alone() -> None:
    lift = GoalLift(explicit="db", stack=(_goal(1, "ui"),))
    assert (lift.multiplier(["db"]), lift.multiplier(["goal:db"]), lift.multiplier(["ui"])) == (1.5, 1.5, 1.0)
    assert lift.goals_of(["ui"]) == []
    assert not GoalLift().in_play and lift.in_play
