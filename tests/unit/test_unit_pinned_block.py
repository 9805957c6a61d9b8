"""The per-prompt hook's block (recall.md §9): order, layout, budget and character cap, settings."""

from __future__ import annotations

import json
from typing import Any

from e2e.sleep_support import make

from hippod.handlers.pinned import HookInput, Settings, hook_input
from hippod.model.memory import Memory
from hippod.recall import pinned_block as pb
from hippod.recall.cut import marker

STAMP = "2026-01-01T00:00:00.000Z"


def mem(mid: str, content: str, created: str = STAMP, **fields: Any) -> Memory:
    """A pinned memory (unless told otherwise) with the given id and created time."""
    values: dict[str, Any] = {"id": mid, "created": created, "pinned": True, **fields}
    return make(content, **values)


def test_pinned_order_is_scope_boost_then_global_factor_then_created_desc() -> None:
    old = pb.Entry(mem("a", "old local", "2026-01-01T00:00:00.000Z"), "local")
    new = pb.Entry(mem("b", "new local", "2026-01-02T00:00:00.000Z"), "local")
    glob = pb.Entry(mem("c", "newest global", "2026-01-03T00:00:00.000Z"), "global")
    scoped = pb.Entry(mem("d", "scoped global", tags=["scope:deploy"]), "global")
    other = pb.Entry(mem("e", "other scope", "2026-01-09T00:00:00.000Z", tags=["scope:docs"]), "local")
    got = pb.order_pinned([old, glob, other, new, scoped], "deploy")
    assert [e.memory.id for e in got] == ["d", "b", "a", "c", "e"]
    assert [e.memory.id for e in pb.order_pinned([old, glob, new], None)] == ["b", "a", "c"]


def test_lines_and_sections() -> None:
    local = pb.Entry(
        mem("a", "Line one\nline two", tags=["build", "path:src"], confidence="observed"), "local"
    )
    glob = pb.Entry(mem("b", "Global rule"), "global")
    assert pb.render([local], [glob]) == (
        "## Hippo memory\n\n### Pinned\n- [observed] Line one\n  line two [build]"
        "\n\n### Recent\n- [global] [verified] Global rule"
    )
    assert pb.render([], [glob]) == "## Hippo memory\n\n### Recent\n- [global] [verified] Global rule"
    assert pb.render([], []) == ""


def test_fill_skips_what_does_not_fit_and_keeps_under_the_character_cap() -> None:
    big = pb.Entry(mem("a", "x" * 400), "local")
    small = pb.Entry(mem("b", "short"), "local")
    recent = pb.Entry(mem("c", "recent one", pinned=False), "local")
    block = pb.fill([big, small], [recent], budget=40)
    assert [e.memory.id for e in block.pinned] == ["b"]
    assert [e.memory.id for e in block.recent] == ["c"]
    assert block.items == 2
    assert pb.fill([big], [], budget=40).markdown == ""
    many = [pb.Entry(mem(f"m{i}", f"{i} " + "y" * 990), "local") for i in range(20)]
    capped = pb.fill(many, [], budget=100_000)
    assert 9_000 < len(capped.markdown) <= pb.MAX_CHARS
    assert pb.fill(many, [], budget=100_000) == capped


def test_an_entry_too_long_for_what_is_left_is_cut_with_a_marker() -> None:
    small = pb.Entry(mem("a", "Run make check"), "local")
    huge = pb.Entry(mem("b", "segment line\n" * 70_000, pinned=False), "local")
    after = pb.Entry(mem("c", "Prefer small commits", pinned=False), "local")
    block = pb.fill([small], [huge, after], budget=1500)
    assert len(block.markdown) <= 1500 * 4 and len(block.markdown) > 1500 * 4 - 100
    assert [e.memory.id for e in block.recent] == ["b", "c"]
    [cut] = [e for e in block.recent if e.full_chars is not None]
    assert cut.full_chars == len(huge.memory.content)
    assert cut.memory.content.endswith(marker("b", len(huge.memory.content)))
    # The character cap holds too, whatever the budget.
    assert len(pb.fill([small], [huge], budget=100_000).markdown) <= pb.MAX_CHARS
    assert pb.fill([small], [huge], budget=1500) == pb.fill([small], [huge], budget=1500)


def test_dedupe_drops_a_repeated_text() -> None:
    a = pb.Entry(mem("a", "Same text"), "local")
    b = pb.Entry(mem("b", " same TEXT "), "global")
    assert pb.dedupe([a, b]) == [a]
    assert pb.dedupe([b], {pb.content_key(a.memory)}) == []


def test_additional_context_line() -> None:
    line = pb.additional_context('## Hippo memory\n- "quoted"')
    assert "\n" not in line
    assert json.loads(line) == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": '## Hippo memory\n- "quoted"',
        }
    }
    assert pb.digest("a") != pb.digest("b") and len(pb.digest("a")) == 64


def test_settings_fall_back_per_key() -> None:
    assert Settings.of({}) == Settings()
    got = Settings.of(
        {"pinnedInject": {"enabled": "no", "budget": -1, "refreshTurns": 0, "promptRecall": True}}
    )
    assert got == Settings(enabled=True, budget=1500, refresh_turns=0, prompt_recall=True)
    assert Settings.of({"pinnedInject": []}) == Settings()


def test_hook_input_reads_session_and_prompt() -> None:
    assert hook_input({"session_id": "s1", "prompt": "hi"}, "env") == HookInput("s1", "hi")
    assert hook_input({"session_id": " ", "prompt": "  "}, "env") == HookInput("env", None)
    assert hook_input("not json", None) == HookInput(None, None)
