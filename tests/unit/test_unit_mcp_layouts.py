"""The layouts of hippo_assemble, hippo_drill and hippo_predict_baserate (hippod/mcp/), pure."""

from __future__ import annotations

import math

from hippod.continuity import render
from hippod.mcp import assemble as asm
from hippod.mcp import baserate, drill
from hippod.store.sqlite.continuity import Event, Handoff


def event(n: int, content: str, kind: str = "progress") -> Event:
    return Event(n, "s1", None, kind, content, "cli", f"2026-06-01T10:{n:02d}:00.000Z")


def handoff(n: int, minute: int, summary: str) -> Handoff:
    return Handoff(n, "s1", None, None, summary, "next thing", [], f"2026-06-01T10:{minute:02d}:00.000Z")


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def test_items_are_in_time_order_events_before_handoffs_at_one_instant() -> None:
    found = asm.items([event(1, "a"), event(3, "c")], [handoff(7, 3, "h"), handoff(8, 2, "g")])
    assert [i.brief for i in found] == [
        "- [progress] a",
        "- [handoff #8] g",
        "- [progress] c",
        "- [handoff #7] h",
    ]


def test_fresh_tail_in_full_older_as_short_bullets() -> None:
    long_first_line = "x" * 300
    found = asm.items(
        [event(n, f"{long_first_line if n == 1 else f'step {n}'}\nmore") for n in range(1, 6)], []
    )
    done = asm.assemble("s1", found, budget=4000, fresh_tail_count=2, summarize_older=True)
    lines = done.text.splitlines()
    assert lines[0] == "## Session s1 (5 of 5 items)"
    assert len(lines[1]) == asm.BULLET_CHARS and lines[1].endswith("…")
    assert lines[2:4] == ["- [progress] step 2", "- [progress] step 3"]
    assert lines[4:] == [
        "- [progress] 2026-06-01T10:04:00.000Z step 4 more",
        "- [progress] 2026-06-01T10:05:00.000Z step 5 more",
    ]
    assert (done.total, done.full, done.summarized, done.left_out) == (5, 2, 3, 0)
    everything = asm.assemble("s1", found, budget=4000, fresh_tail_count=0, summarize_older=False)
    assert everything.full == 5 and long_first_line in everything.text


def test_the_budget_keeps_the_newest_and_says_what_was_left_out() -> None:
    found = asm.items([event(n, f"event number {n} " + "w" * 60) for n in range(1, 41)], [])
    for budget in (60, 120, 400):
        done = asm.assemble("s1", found, budget=budget, fresh_tail_count=3, summarize_older=True)
        assert tokens(done.text) <= budget
        assert done.left_out > 0 and done.full + done.summarized + done.left_out == 40
        lines = done.text.splitlines()
        assert lines[1] == f"({done.left_out} older items left out to fit the budget)"
        assert "event number 40" in lines[-1]
    assert asm.assemble("s1", found, budget=0, fresh_tail_count=3, summarize_older=True).text == ""
    # A budget too small for the heading gives nothing rather than a block over budget.
    assert asm.assemble("s1", found, budget=5, fresh_tail_count=3, summarize_older=True).text == ""


def test_a_fresh_item_too_long_for_the_rest_of_the_budget_is_summarised() -> None:
    found = asm.items([event(1, "short"), event(2, "long " + "z" * 2000)], [])
    done = asm.assemble("s1", found, budget=100, fresh_tail_count=5, summarize_older=True)
    assert done.full == 1 and done.summarized == 1
    assert done.text.splitlines()[-1].startswith("- [progress] long zzz") and tokens(done.text) <= 100


def test_no_items() -> None:
    done = asm.assemble("s9", [], budget=100, fresh_tail_count=5, summarize_older=True)
    assert done.text == "No continuity recorded for session s9."


def test_first_line_skips_blank_lines() -> None:
    assert render.first_line("\n\n  second \nthird") == "second"
    assert render.first_line("") == ""


NODES = [
    drill.Node("mem_a", 1, "alpha"),
    drill.Node("mem_b", 2, "beta"),
    drill.Node("mem_c", 1, None),
    drill.Node("mem_d", 1, "d" * 200),
]


def test_drill_lists_parents_indented_by_depth() -> None:
    done = drill.render("sem_1", 3, "Merged text\nsecond line", NODES, limit=50, budget=4000)
    lines = done.text.splitlines()
    assert lines[:4] == [
        "## sem_1 merges 3 memories: Merged text",
        "- mem_a alpha",
        "  - mem_b beta",
        "- mem_c (no longer stored)",
    ]
    assert len(lines[4]) == drill.LINE_CHARS and lines[4].endswith("…")
    assert done.left_out == 0 and len(done.listed) == 4


def test_drill_stops_at_the_limit_or_the_budget() -> None:
    by_limit = drill.render("sem_1", 3, "Merged", NODES, limit=2, budget=4000)
    assert [n.id for n in by_limit.listed] == ["mem_a", "mem_b"]
    assert by_limit.text.splitlines()[-1] == "(2 more parents not shown: past the limit or the budget)"
    by_budget = drill.render("sem_1", 3, "Merged", NODES, limit=50, budget=40)
    assert tokens(by_budget.text) <= 40 and 0 < len(by_budget.listed) < 4
    assert drill.render("sem_1", 3, "Merged", NODES, limit=50, budget=3).text == ""


def test_baserate_counts_and_rates() -> None:
    result = baserate.count("migration", ["success", "failure", "success", None, "weird"])
    assert result.total == 5
    assert result.counts == {"success": 2, "failure": 1, "partial": 0, "unknown": 2}
    assert result.rates == {"success": 0.4, "failure": 0.2, "partial": 0.0, "unknown": 0.4}
    assert baserate.render(result).splitlines() == [
        'Base rate for "migration" from 5 traces:',
        "  success      2   40.0%",
        "  failure      1   20.0%",
        "  partial      0    0.0%",
        "  unknown      2   40.0%",
    ]
    only = baserate.render(baserate.count("t", ["partial"]))
    assert only.splitlines()[0] == 'Base rate for "t" from 1 trace:' and "unknown" not in only


def test_baserate_without_traces() -> None:
    result = baserate.count("none", [])
    assert result.rates == {"success": 0.0, "failure": 0.0, "partial": 0.0}
    assert baserate.render(result) == 'No trace memories carry the tag "none", so there is no base rate yet.'
