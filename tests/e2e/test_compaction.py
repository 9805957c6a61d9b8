"""The compaction hooks (ingest.md §8) and compact-resume (continuity.md §4) against a real daemon,
fed Claude Code's PreCompact, PostCompact and SessionStart payloads and a real transcript file."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.sleep_support import project, query
from e2e.test_spool import pending, write_file
from e2e.transcripts import claude_records, write_jsonl
from hippoctl.protocol import spool

if TYPE_CHECKING:
    from e2e.harness import Hippo

SESSION = "5f0c7a8e-2a1b-4c3d-9e8f-0a1b2c3d4e5f"
GITHUB = "ghp_" + "b" * 36
WAIT = 60.0


def transcript(hippo: Hippo, *extra: dict[str, Any]) -> str:
    """A Claude Code session file under the user's ~/.claude/projects."""
    path = Path(hippo.user_home, ".claude", "projects", "-tmp-proj", f"{SESSION}.jsonl")
    records = claude_records(
        ["Port the ranking module to the new store", f"Use the token {GITHUB} for the registry"],
        ["The BM25 tests pass now.", "Next I will count the rendered label lines in the budget."],
    )
    return str(write_jsonl(path, [*records, *extra]))


def event(name: str, path: str, cwd: str, **fields: Any) -> str:
    """A hook payload as Claude Code sends it."""
    return json.dumps(
        {"session_id": SESSION, "transcript_path": path, "cwd": cwd, "permission_mode": "default",
         "hook_event_name": name, **fields}
    )  # fmt: skip


def summary_with(items: list[str]) -> str:
    lines = ["This session ported the ranking module.", "", "## Memories for hippo", ""]
    return "\n".join([*lines, *(f"- {item}" for item in items), "", "That is all."])


def hook(hippo: Hippo, verb: str, text: str | None, cwd: str) -> str:
    """Run a hook verb the way the host does: exit 0, nothing on stderr; returns stdout."""
    done = hippo.ctl(verb, input=text, cwd=cwd, timeout=60)
    assert (done.returncode, done.stderr) == (0, ""), done
    return done.stdout


def post_compact(hippo: Hippo, path: str, folder: str, items: list[str]) -> str:
    return hook(
        hippo, "post-compact", event("PostCompact", path, folder, compact_summary=summary_with(items)), folder
    )


def compaction_memories(db: str) -> list[tuple[Any, ...]]:
    return query(
        db,
        "SELECT content, tags, source, confidence, source_session_id, compaction_id FROM memories "
        "WHERE source = 'compaction' ORDER BY rowid",
    )


LESSONS = [f"Lesson {word} about the ranking module stays true" for word in "abcdefghijkl"]


def test_pre_compact_post_compact_and_compact_resume(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("init", "--global")
    folder, db = project(hippo)
    path = transcript(hippo)

    out = hook(
        hippo,
        "pre-compact",
        event("PreCompact", path, folder, trigger="auto", custom_instructions=""),
        folder,
    )
    assert "Memories for hippo" in out and "at most 10" in out
    [(cid, session, trigger, status)] = query(db, "SELECT id, session_id, trigger, status FROM compactions")
    assert (session, trigger, status) == (SESSION, "auto", "pending")
    [snap] = query(db, "SELECT task, summary, next_step, source, session_id, status FROM task_snapshots")
    assert snap[0] == "Use the token [REDACTED:github] for the registry"
    assert snap[1] == "The BM25 tests pass now.\n\nNext I will count the rendered label lines in the budget."
    assert snap[2:] == (
        "Next I will count the rendered label lines in the budget.",
        "pre-compact",
        SESSION,
        "active",
    )
    mirror = os.path.join(os.path.dirname(db), "buffer", "active-task.md")
    with open(mirror, encoding="utf-8") as handle:
        assert "- Task: Use the token [REDACTED:github] for the registry" in handle.read()

    long_item = "Long lesson " + "x" * 600
    items = [LESSONS[0], f"The deploy key is {GITHUB} keep it", long_item, LESSONS[0].upper(), *LESSONS[1:]]
    post = event("PostCompact", path, folder, trigger="auto", compact_summary=summary_with(items))
    out = hook(hippo, "post-compact", post, folder)
    assert out == "Hippo saved 10 memories from this compaction and restored your task snapshot.\n"
    saved = compaction_memories(db)
    assert [r[0] for r in saved] == LESSONS[:10]
    assert {(r[1], r[2], r[3], r[4], r[5]) for r in saved} == {
        ('["compaction"]', "compaction", "observed", SESSION, cid)
    }
    [(status, stored, count, raw)] = query(db, "SELECT status, summary, saved, items_json FROM compactions")
    assert (status, count) == ("done", 10)
    assert GITHUB not in stored and "[REDACTED:github]" in stored
    outcomes = [(i["outcome"], i["text"][:12]) for i in json.loads(raw)]
    assert outcomes[:4] == [
        ("saved", "Lesson a abo"),
        ("secret", "The deploy k"),
        ("too_long", "Long lesson "),
        ("repeat", "LESSON A ABO"),
    ]
    assert outcomes[-3:] == [
        ("saved", "Lesson j abo"),
        ("over_limit", "Lesson k abo"),
        ("over_limit", "Lesson l abo"),
    ]
    assert GITHUB not in raw
    assert query(db, "SELECT count(*) FROM audit_log WHERE op = 'compaction_save'") == [(10,)]

    resume = event("SessionStart", path, folder, source="compact")
    out = hook(hippo, "compact-resume", resume, folder)
    assert out.startswith(
        "## Restored after compaction\nTask: Use the token [REDACTED:github] for the registry\n"
    )
    assert "Next step: Next I will count the rendered label lines in the budget.\n" in out
    [(surface, kind, sess, tokens, store)] = query(
        hippo.db, "SELECT surface, kind, session_id, tokens, store FROM token_ledger"
    )
    assert (surface, kind, sess, store) == ("compact_resume", "sent", SESSION, os.path.join(folder, ".hippo"))
    assert tokens == -(-len(out.rstrip("\n")) // 4)
    # A session that starts for another reason gets nothing and counts nothing.
    assert hook(hippo, "compact-resume", event("SessionStart", path, folder, source="startup"), folder) == ""
    assert len(query(hippo.db, "SELECT id FROM token_ledger")) == 1


def test_a_second_compaction_skips_what_the_first_saved(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    path = transcript(hippo)
    post_compact(hippo, path, folder, LESSONS[:2])
    again = summary_with([LESSONS[1].lower() + ".", LESSONS[2]])
    out = hook(hippo, "post-compact", event("PostCompact", path, folder, compact_summary=again), folder)
    assert out == "Hippo saved 1 memory from this compaction.\n"
    assert [r[0] for r in compaction_memories(db)] == LESSONS[:3]
    assert len(query(db, "SELECT id FROM compactions WHERE status = 'done'")) == 2


def test_the_summary_is_read_from_the_transcript_when_the_payload_has_none(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    compacted = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "sessionId": SESSION,
        "isCompactSummary": True,
        "message": {"role": "user", "content": summary_with(LESSONS[3:5])},
        "uuid": "c-1",
        "timestamp": "2025-06-01T11:00:00.000Z",
    }
    boundary = {"type": "system", "subtype": "compact_boundary", "timestamp": "2025-06-01T11:00:00Z"}
    path = transcript(hippo, boundary, compacted)
    out = hook(hippo, "post-compact", event("PostCompact", path, folder, trigger="manual"), folder)
    assert out == "Hippo saved 2 memories from this compaction.\n"
    assert [r[0] for r in compaction_memories(db)] == LESSONS[3:5]


def test_without_a_project_store_the_global_store_takes_the_compaction(hippo: Hippo) -> None:
    # The daemon keeps the global store open from its start, so it always exists by now.
    hippo.start()
    folder = os.path.join(hippo.root, "bare")
    os.makedirs(folder)
    path = transcript(hippo)
    assert "Memories for hippo" in hook(hippo, "pre-compact", event("PreCompact", path, folder), folder)
    post = event("PostCompact", path, folder, compact_summary=summary_with(LESSONS[:2]))
    assert hook(hippo, "post-compact", post, folder).startswith("Hippo saved 2 memories")
    assert [r[0] for r in compaction_memories(hippo.db)] == LESSONS[:2]
    assert not os.path.exists(os.path.join(folder, ".hippo"))


def test_a_payload_that_is_not_an_object_is_refused_under_strict(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    done = hippo.ctl("post-compact", "--strict", input="[1, 2]", cwd=folder)
    assert done.returncode == 2 and done.stderr == "hippoctl: post-compact: the input is not a JSON object\n"
    assert query(db, "SELECT count(*) FROM compactions") == [(0,)]


def test_spooled_compaction_hooks_are_replayed_once_after_a_restart(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    path = transcript(hippo)
    hippo.kill()
    env = hippo.daemon_env(HIPPO_NO_SPAWN="1")
    for verb, text in (
        ("pre-compact", event("PreCompact", path, folder, trigger="auto")),
        ("post-compact", event("PostCompact", path, folder, compact_summary=summary_with(LESSONS[:3]))),
    ):
        done = hippo.ctl(verb, input=text, cwd=folder, env=env)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    names = sorted(pending(hippo))
    assert len(names) == 2
    # A copy of the post-compact file under a new name stands for the same request delivered twice.
    [post_name] = os.listdir(os.path.join(hippo.home, "spool", "post-compact"))
    document = json.loads(Path(hippo.home, "spool", "post-compact", post_name).read_text())
    hippo.start()
    assert hippo.wait_for(lambda: not pending(hippo), WAIT), pending(hippo)
    write_file(hippo, post_name, document, kind="post-compact")
    assert hippo.wait_for(lambda: not pending(hippo), WAIT)
    hippo.stop()
    assert query(db, "SELECT status, saved FROM compactions") == [("done", 3)]
    assert [r[0] for r in compaction_memories(db)] == LESSONS[:3]
    assert query(db, "SELECT source FROM task_snapshots") == [("pre-compact",)]
    assert spool.KINDS  # the kinds the client spools include both compaction verbs
    assert {"pre-compact", "post-compact"} <= set(spool.KINDS)


def test_sleep_never_removes_compaction_memories(hippo: Hippo) -> None:
    hippo.start(fake_now="2026-01-01T00:00:00Z")
    folder, db = project(hippo)
    hippo.ok("remember", "An ordinary episode about the ranking module and its tests", cwd=folder)
    path = transcript(hippo)
    post_compact(hippo, path, folder, LESSONS[:2])
    hippo.stop()
    hippo.start(fake_now="2046-01-01T00:00:00Z")
    hippo.ok("sleep", cwd=folder)
    assert [r[0] for r in compaction_memories(db)] == LESSONS[:2]
    assert query(db, "SELECT count(*) FROM memories WHERE source != 'compaction'") == [(0,)]


def test_compact_resume_names_the_next_step_once(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    path = Path(hippo.user_home, ".claude", "projects", "-tmp-proj", f"{SESSION}.jsonl")
    last = "Done. The ranking tests pass.\n\nNext step: wire the budget fill into the context block."
    write_jsonl(path, claude_records(["Port the ranking module"], ["Ported the BM25 scorer.", last]))
    hook(hippo, "pre-compact", event("PreCompact", str(path), folder, trigger="auto"), folder)
    [(next_step,)] = query(db, "SELECT next_step FROM task_snapshots")
    assert next_step == "wire the budget fill into the context block."
    out = hook(hippo, "compact-resume", event("SessionStart", str(path), folder, source="compact"), folder)
    lines = out.splitlines()
    assert lines[0] == "## Restored after compaction"
    assert lines[1] == "Task: Port the ranking module"
    assert lines[2].startswith("Summary: Ported the BM25 scorer. Done. The ranking tests pass.")
    assert lines[3] == "Next step: wire the budget fill into the context block."
    assert out.count("Next step") == 1


def test_a_stored_next_step_with_its_label_is_shown_once_everywhere(hippo: Hippo) -> None:
    stamp = "2026-03-02T09:00:00.000Z"
    hippo.start(fake_now=stamp)
    folder, db = project(hippo)
    # A snapshot as a daemon stored it when the whole last message was the next step.
    stored = "Done.\n\nNext step: wire the budget fill."
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO task_snapshots (task, summary, next_step, status, source, session_id, tenant_id, "
            "created_at, updated_at) VALUES (?, ?, ?, 'active', 'pre-compact', ?, 'default', ?, ?)",
            ("Port ranking", "BM25 passes", stored, SESSION, stamp, stamp),
        )
    conn.close()
    step = "wire the budget fill."
    resumed = hook(hippo, "compact-resume", event("SessionStart", "", folder, source="compact"), folder)
    shown = hippo.ok("snapshot", "show", cwd=folder).stdout
    current = hippo.ok("current", "show", cwd=folder).stdout
    block = hippo.ok("context", "ranking", cwd=folder).stdout
    for text, line in [
        (resumed, f"Next step: {step}"),
        (shown, f"- Next step: {step}"),
        (current, f"Next step: {step}"),
        (block, f"Next step: {step}"),
    ]:
        assert line in text.splitlines() and text.count("Next step") == 1, text
    assert hippo.json("snapshot", "show", cwd=folder)["snapshot"]["next_step"] == step
    assert hippo.json("current", "show", cwd=folder)["next_step"] == step
