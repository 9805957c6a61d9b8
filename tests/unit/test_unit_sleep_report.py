"""The short summary a sleep prints and `last-sleep` shows an agent (hippod/sleep/sleep_report.py)."""

from __future__ import annotations

from hippoctl.protocol.replies_lifecycle import (
    DedupeCounts,
    SleepConflict,
    SleepFaded,
    SleepMerge,
    SleepReply,
    SleepShared,
)
from hippod.sleep import sleep_report as sr


def _merge(text: str, members: int = 2, tenant: str = "default") -> SleepMerge:
    return SleepMerge(
        semantic_id="sem_1", members=[f"mem_{i}" for i in range(members)], text=text, tenant=tenant
    )


def test_a_sleep_that_changed_nothing_tells_nothing() -> None:
    quiet = SleepReply(active=12, replayed=5, details=["replayed mem_1"])
    assert sr.summary_lines(quiet) == []
    assert sr.summary(quiet) == sr.NOTHING
    assert sr.summary(SleepReply(dry_run=True)) == f"{sr.DRY_RUN_HEADER}\n{sr.NOTHING}"


def test_lists_are_capped_and_quotes_cut() -> None:
    long = "A lesson about the build cache " + "that goes on and on " * 10
    reply = SleepReply(merges=[_merge(long, 3)] + [_merge(f"Lesson {n} about caching") for n in range(4)])
    lines = sr.summary_lines(reply)
    assert lines[0] == "Merged 11 related memories into 5:"
    assert lines[1].startswith('  - "A lesson about the build cache') and lines[1].endswith('…" (3 memories)')
    assert len(lines[1]) < 110
    assert lines[4] == "  … and 2 more"
    assert len(lines) == 5


def test_conflicts_dormant_and_the_rest_in_words() -> None:
    reply = SleepReply(
        removed=4,
        dormant_moved=2,
        secret_deleted=1,
        dormant_expired=1,
        deduped=DedupeCounts(episodic=1, semantic=1),
        junk_removed=1,
        learned=1,
        agent_notes=2,
        shared=1,
        went_dormant=[
            SleepFaded(id="mem_a", text="Old fact one", strength=0.01),
            SleepFaded(id="mem_b", text="Old fact two", strength=0.02),
        ],
        open_conflicts=[
            SleepConflict(a="mem_c", b="mem_d", a_text="X is on", b_text="X is off", reason="r", new=True)
        ],
        shared_memories=[SleepShared(id="mem_e", global_id="g_0123456789ab", text="Use rg, not grep")],
    )
    assert sr.summary_lines(reply) == [
        "1 open conflict (`hippoctl conflicts` lists it, `hippoctl resolve <n>` settles it):",
        '  - "X is on" vs "X is off" (new)',
        "2 memories went dormant after fading from disuse (`hippoctl dormant` lists them, "
        "`hippoctl dormant restore <id>` brings one back):",
        '  - "Old fact one"',
        '  - "Old fact two"',
        "Shared 1 lesson with the global store, where every project's recall, context and prompt hook "
        "can show it:",
        '  - "Use rg, not grep" as g_0123456789ab',
        '  (`hippoctl forget <g_id>` takes a copy back; "autoShareOnSleep": false in the project\'s '
        ".hippo/config.json turns auto-share off)",
        "Also removed 2 duplicates, 1 junk memory, 1 faded memory, 1 faded memory holding a secret and "
        "1 expired dormant memory; learned 1 lesson from git; imported 2 agent notes.",
    ]
    text = "\n".join(sr.summary_lines(reply))
    assert "mem_" not in text and "strength" not in text


def test_another_tenants_memories_are_not_named() -> None:
    reply = SleepReply(
        merges=[_merge("Ours"), _merge("Theirs", tenant="acme")],
        went_dormant=[SleepFaded(id="mem_t", text="Their faded fact", strength=0.0, tenant="acme")],
        open_conflicts=[
            SleepConflict(a="a", b="b", a_text="p", b_text="q", reason="r", new=False, tenant="acme")
        ],
    )
    mine = sr.for_tenant(reply, "default")
    assert [m.text for m in mine.merges] == ["Ours"] and not mine.went_dormant and not mine.open_conflicts
    assert "Theirs" not in sr.summary(mine)


def test_first_line_skips_blank_lines_and_collapses_spaces() -> None:
    assert sr.first_line("\n\n  Deploy   failed\nsecond line") == "Deploy failed"
    assert sr.first_line("x" * 130) == "x" * 119 + "…"
