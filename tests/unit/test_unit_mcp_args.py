"""Checking MCP tool arguments in the daemon (hippod/mcp/args.py, integrations.md §11)."""

from __future__ import annotations

from typing import Any

import pytest

from hippod.base.errors import HippoError
from hippod.mcp import args as a


def test_the_19_tools() -> None:
    assert len(a.TOOLS) == 19
    assert all(name.startswith("hippo_") for name in a.TOOLS)


def test_defaults_and_the_global_argument() -> None:
    assembled = a.parse("hippo_assemble", {"session_id": "s1"})
    assert assembled == a.AssembleArgs(
        session_id="s1", budget=4000, fresh_tail_count=10, summarize_older=True, scope=None
    )
    remembered = a.parse("hippo_remember", {"text": "a lesson", "global": True, "tag": ["x", "y"]})
    assert isinstance(remembered, a.RememberArgs) and remembered.global_ is True
    assert a.tags(remembered.tag) == ["x", "y"]
    assert a.tags("one, tag") == ["one, tag"]
    assert a.tags(None) == []
    # Budgets left out follow the store's configuration.
    recall = a.parse("hippo_recall", {"query": "q"})
    assert isinstance(recall, a.RecallArgs) and recall.budget is None
    assert a.parse("hippo_status", {}) == a.StatusArgs()


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("hippo_forget", {}, "unknown tool 'hippo_forget'; the tools are hippo_recall, "),
        ("hippo_recall", {}, "hippo_recall: missing required argument `query`"),
        ("hippo_recall", {"query": "q", "colour": 1}, "hippo_recall: unknown argument `colour`"),
        (
            "hippo_recall",
            {"query": "q", "budget": "9"},
            "hippo_recall: budget: expected `int | null`, got `str`",
        ),
        ("hippo_outcome", {"good": "yes"}, "hippo_outcome: good: expected `bool`, got `str`"),
        ("hippo_outcome", {"good": True, "ids": [1]}, "hippo_outcome: ids[0]: expected `str`, got `int`"),
        ("hippo_outcome", {"good": True, "ids": []}, "hippo_outcome: ids must name at least one memory"),
        ("hippo_recall", {"query": "q", "limit": -1}, "hippo_recall: limit must be 0 or more"),
        ("hippo_assemble", {"session_id": "s", "fresh_tail_count": -2}, "hippo_assemble: fresh_tail_count"),
        ("hippo_drill", {"summary_id": "sem_x", "depth": 0}, "hippo_drill: depth must be between 1 and 10"),
        ("hippo_drill", {"summary_id": "sem_x", "depth": 11}, "hippo_drill: depth must be between 1 and 10"),
        ("hippo_drill", {"summary_id": "sem_x", "limit": 0}, "hippo_drill: limit must be 1 or more"),
        ("hippo_context", {"budget": -1}, "hippo_context: budget must be 0 or more"),
        ("hippo_learn", {"days": 0}, "hippo_learn: days must be 1 or more"),
        ("hippo_resolve", {"conflict_id": "1", "keep": "m"}, "hippo_resolve: conflict_id: expected `int`"),
        ("hippo_status", {"verbose": True}, "hippo_status: unknown argument `verbose`"),
    ],
)
def test_bad_arguments_are_usage_errors(tool: str, arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(HippoError) as caught:
        a.parse(tool, arguments)
    assert caught.value.code == "usage"
    assert caught.value.message.startswith(message), caught.value.message
    assert "\n" not in caught.value.message


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("hippo_card_show", {"card_id": 2**63}, "the card number must be between 1 and"),
        ("hippo_card_move", {"card_id": 1, "action": "heartbeat", "run": 0}, "the run number"),
        ("hippo_card_create", {"title": "t", "depends_on": [0]}, "the card number"),
        ("hippo_card_move", {"card_id": 1, "action": "fly"}, "action must be one of"),
        ("hippo_card_move", {"card_id": 1, "action": "block"}, "block needs a reason"),
        ("hippo_card_move", {"card_id": 1, "action": "complete"}, "complete needs an outcome"),
        ("hippo_card_move", {"card_id": 1, "action": "review", "outcome": "success"}, "outcome goes with"),
        ("hippo_card_move", {"card_id": 1, "action": "review", "reason": "x"}, "reason goes with"),
    ],
)
def test_card_tools_refuse_what_the_verbs_would(tool: str, arguments: dict[str, Any], named: str) -> None:
    with pytest.raises(HippoError) as refused:
        a.parse(tool, arguments)
    assert refused.value.code == "usage" and named in refused.value.message
