"""Counts in reply texts: one noun for 1, the plural for everything else, and words that agree with them."""

from __future__ import annotations

import pytest

from hippoctl.doctor import render as doctor_render
from hippoctl.protocol.replies import WorkspaceEntry
from hippoctl.protocol.replies_doctor import OK, WARN, Check
from hippoctl.protocol.wording import agree, plural, plural_of
from hippod.handlers.daily import _list_text
from hippod.jobs.daily_run import summary_line
from hippod.recall.render import heading

NOUNS = [
    ("memory", "memories"),
    ("entry", "entries"),
    ("lesson", "lessons"),
    ("duplicate", "duplicates"),
    ("conflict", "conflicts"),
    ("open conflict", "open conflicts"),
    ("day", "days"),
    ("check", "checks"),
    ("warning", "warnings"),
    ("match", "matches"),
    ("junk memory", "junk memories"),
]


@pytest.mark.parametrize(("one", "many"), NOUNS)
def test_one_takes_the_singular_and_every_other_count_the_plural(one: str, many: str) -> None:
    assert plural(1, one) == f"1 {one}"
    assert plural(2, one) == f"2 {many}"
    assert plural(0, one) == f"0 {many}"
    assert plural_of(one) == many


def test_an_irregular_plural_is_given() -> None:
    assert plural(1, "child", "children") == "1 child"
    assert plural(3, "child", "children") == "3 children"


@pytest.mark.parametrize(("one", "many"), [("was", "were"), ("is", "are"), ("has", "have"), ("it", "them")])
def test_a_word_agrees_with_its_count(one: str, many: str) -> None:
    assert agree(1, one) == one
    assert agree(2, one) == many
    assert agree(0, one) == many


def test_a_word_outside_the_table_is_given_both_forms() -> None:
    assert agree(1, "a duplicate", "duplicates") == "a duplicate"
    assert agree(4, "a duplicate", "duplicates") == "duplicates"


def test_reply_texts_count_one_in_the_singular() -> None:
    assert heading(1, 1, "deploy") == 'Found 1 memory (1 token) for: "deploy"'
    assert heading(2, 30, "deploy").startswith("Found 2 memories (30 tokens)")
    assert summary_line(1, 1) == "Daily maintenance complete: 1 workspace processed, 1 command failure."
    assert summary_line(2, 0) == "Daily maintenance complete: 2 workspaces processed, 0 command failures."
    checks = [Check("Python", OK, "fine"), Check("Socket", WARN, "shared", "chmod 700")]
    assert doctor_render(checks).splitlines()[-1] == "2 checks: 0 failed, 1 warning, 1 ok"
    assert doctor_render(checks[:1]).splitlines()[-1] == "1 check: 0 failed, 0 warnings, 1 ok"


def test_workspace_list_heading() -> None:
    one = [WorkspaceEntry(path="/p", exists=True, has_store=True)]
    assert _list_text(one).splitlines()[0] == "1 registered workspace:"
    assert _list_text(one * 2).splitlines()[0] == "2 registered workspaces:"


def test_a_long_query_is_shortened_where_a_heading_repeats_it() -> None:
    """A heading counts against the budget: a query of thousands of words must not eat it."""
    query = " ".join(f"zzq{i}x" for i in range(3000))
    shown = heading(1, 10, query)
    assert len(shown) < 300, shown
    assert shown.endswith(f'… ({len(query):,} characters)"')
    assert shown.startswith('Found 1 memory (10 tokens) for: "zzq0x zzq1x')
