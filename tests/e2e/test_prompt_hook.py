"""The per-prompt hook, `context --pinned-only --include-recent 5 --format additional-context`
(recall.md §9), run as Claude Code runs it: a fresh `hippoctl` fed a real UserPromptSubmit payload."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from e2e.sleep_support import make, plant, project, query
from e2e.test_hook_transport import listener, welcome_then
from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo

HOOK = ("context", "--pinned-only", "--include-recent", "5", "--format", "additional-context")
SESSION = "5b0c8a1e-7d2f-4c3a-9e61-prompt-hook"


def payload(folder: str, prompt: str = "why does the build fail?", session: str | None = SESSION) -> str:
    """A UserPromptSubmit payload as Claude Code sends it."""
    fields: dict[str, Any] = {
        "session_id": session,
        "transcript_path": f"/home/u/.claude/projects/-home-u-proj/{session}.jsonl",
        "cwd": folder,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    if session is None:
        del fields["session_id"]
    return json.dumps(fields)


def run_hook(hippo: Hippo, folder: str, *extra: str, **fields: Any) -> str:
    """Run the hook from the host's point of view: exit 0, nothing on stderr; returns stdout."""
    done = hippo.ctl(*HOOK, *extra, input=payload(folder, **fields), cwd=hippo.root)
    assert (done.returncode, done.stderr) == (0, ""), done
    return done.stdout


def block(stdout: str) -> str:
    """The markdown inside the additional-context line."""
    assert stdout.endswith("\n") and stdout.count("\n") == 1, stdout
    document = json.loads(stdout)
    assert list(document) == ["hookSpecificOutput"]
    assert document["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    markdown = document["hookSpecificOutput"]["additionalContext"]
    assert isinstance(markdown, str)
    return markdown


def ledger(hippo: Hippo, count: int) -> list[tuple[Any, ...]]:
    """The prompt-hook ledger rows of the global store, once `count` of them are written (they are queued)."""
    sql = "SELECT session_id, tokens, items, skipped, kind FROM token_ledger WHERE surface = 'prompt_hook'"

    def rows() -> list[tuple[Any, ...]]:
        try:
            return query(hippo.db, sql + " ORDER BY id")
        except sqlite3.OperationalError:
            return []

    assert hippo.wait_for(lambda: len(rows()) >= count, 10), rows()
    return rows()


def seeded(hippo: Hippo, config: dict[str, Any] | None = None) -> str:
    """A project with two pinned memories, one global pinned memory and six others; returns the folder."""
    folder, _ = project(hippo, config=config)
    hippo.ok("init", "--global")
    hippo.ok("remember", "Run make check before every push", "--pin", "--tag", "build", cwd=folder)
    hippo.ok("remember", "The API base URL lives in settings.toml", "--pin", "--verified", cwd=folder)
    hippo.ok("remember", "Prefer small commits", "--pin", "--global", "--tag", "style", cwd=folder)
    for n in range(6):
        hippo.ok("remember", f"Observation number {n} about the parser", "--observed", cwd=folder)
    return folder


def test_the_block_has_its_layout_and_is_byte_identical_without_a_session(hippo: Hippo) -> None:
    hippo.start()
    folder = seeded(hippo)
    first = run_hook(hippo, folder, session=None)
    markdown = block(first)
    lines = markdown.split("\n")
    assert lines[:2] == ["## Hippo memory", ""]
    assert lines[2] == "### Pinned"
    pinned = lines[3:6]
    assert sorted(pinned[:2]) == sorted(
        [
            "- [verified] Run make check before every push [build]",
            "- [verified] The API base URL lives in settings.toml",
        ]
    )
    # The global row ranks below the project's (× 1/1.2) and says where it came from.
    assert pinned[2] == "- [global] [verified] Prefer small commits [style]"
    assert lines[6:8] == ["", "### Recent"]
    assert lines[8:] == [f"- [observed] Observation number {n} about the parser" for n in (5, 4, 3, 2, 1)]
    # Without a session id every prompt sends, and the block does not change between prompts.
    assert run_hook(hippo, folder, session=None) == first
    rows = ledger(hippo, 2)
    assert [r[1:] for r in rows] == [(len(markdown) // 4 + (len(markdown) % 4 > 0), 8, 0, "sent")] * 2


def test_an_unchanged_block_is_skipped_and_resent_after_refresh_turns(hippo: Hippo) -> None:
    hippo.start()
    folder = seeded(hippo, config={"pinnedInject": {"refreshTurns": 3}})
    first = run_hook(hippo, folder)
    assert first
    skipped = [run_hook(hippo, folder) for _ in range(3)]
    assert skipped == ["", "", ""]
    assert run_hook(hippo, folder) == first  # the 3rd skip reached refreshTurns: sent again
    assert run_hook(hippo, folder) == ""
    tokens = ledger(hippo, 1)[0][1]
    rows = ledger(hippo, 6)
    assert [(r[0], r[1], r[3]) for r in rows] == [
        (SESSION, tokens, 0),
        (SESSION, tokens, 1),
        (SESSION, tokens, 1),
        (SESSION, tokens, 1),
        (SESSION, tokens, 0),
        (SESSION, tokens, 1),
    ]
    # Another session has its own state: its first prompt sends.
    assert run_hook(hippo, folder, session="other-session") == first
    # Like every surface's rows, they name the store the block was read from and its project.
    where = query(hippo.db, "SELECT DISTINCT project, store FROM token_ledger WHERE surface = 'prompt_hook'")
    assert where == [("proj", f"{folder}/.hippo")]


def test_a_changed_pinned_memory_is_sent_at_once(hippo: Hippo) -> None:
    hippo.start()
    folder = seeded(hippo)
    first = run_hook(hippo, folder)
    assert run_hook(hippo, folder) == ""
    hippo.ok("remember", "Never force-push to main", "--pin", cwd=folder)
    changed = run_hook(hippo, folder)
    assert "- [verified] Never force-push to main" in block(changed)
    assert changed != first
    assert run_hook(hippo, folder) == ""


def test_clearing_the_state_after_a_compaction_resends(hippo: Hippo) -> None:
    hippo.start()
    folder = seeded(hippo)
    db = f"{folder}/.hippo/hippo.db"
    first = run_hook(hippo, folder)
    assert run_hook(hippo, folder) == ""
    assert query(db, "SELECT session_id, skips FROM pinned_inject_state") == [(SESSION, 1)]
    # What post-compact does to the session's state (ingest.md §8), done here by hand.
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DELETE FROM pinned_inject_state WHERE session_id = ?", (SESSION,))
    conn.close()
    assert run_hook(hippo, folder) == first


def test_memories_a_compaction_of_this_session_saved_are_not_recent(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    hippo.stop()
    rows = [
        make("Saved by this session's compaction", source="compaction", source_session_id=SESSION,
             created="2026-02-01T00:00:00.000Z", origin_project="proj"),
        make("Saved by another session's compaction", source="compaction", source_session_id="older",
             created="2026-01-31T00:00:00.000Z", origin_project="proj"),
        make("From another project", created="2026-02-02T00:00:00.000Z", origin_project="elsewhere"),
        make("Superseded", created="2026-02-03T00:00:00.000Z", superseded_by="mem_x"),
    ]  # fmt: skip
    plant(db, rows)
    hippo.start()
    markdown = block(run_hook(hippo, folder))
    assert markdown == "## Hippo memory\n\n### Recent\n- [verified] Saved by another session's compaction"


def test_disabled_prints_nothing_and_records_nothing(hippo: Hippo) -> None:
    hippo.start()
    folder = seeded(hippo, config={"pinnedInject": {"enabled": False}})
    assert run_hook(hippo, folder) == ""
    hippo.ok("status")
    assert query(hippo.db, "SELECT count(*) FROM token_ledger") == [(0,)]


def test_skip_unchanged_off_sends_every_prompt(hippo: Hippo) -> None:
    hippo.start()
    folder = seeded(hippo, config={"pinnedInject": {"skipUnchanged": False}})
    sent = [run_hook(hippo, folder) for _ in range(3)]
    assert sent[0] and sent == [sent[0]] * 3
    assert [r[3] for r in ledger(hippo, 3)] == [0, 0, 0]


def test_prompt_recall_replaces_the_recent_section(hippo: Hippo) -> None:
    hippo.start()
    folder = seeded(hippo, config={"pinnedInject": {"promptRecall": True}})
    hippo.ok("remember", "Flaky test: retry the websocket suite once", "--observed", cwd=folder)
    markdown = block(run_hook(hippo, folder, prompt="the websocket suite is failing again"))
    recent = markdown.split("### Recent\n")[1].split("\n")
    assert recent == ["- [observed] Flaky test: retry the websocket suite once"]
    assert "### Pinned" in markdown
    # No strengthening: recall's side effects do not happen for the hook.
    db = f"{folder}/.hippo/hippo.db"
    assert query(db, "SELECT retrieval_count FROM memories WHERE content LIKE 'Flaky%'") == [(0,)]


def test_the_budget_flag_an_empty_store_and_another_project(hippo: Hippo) -> None:
    hippo.start()
    empty, _ = project(hippo, name="empty")
    assert run_hook(hippo, empty) == ""
    folder = seeded(hippo)
    small = block(run_hook(hippo, folder, "--budget", "20", session=None))
    assert small.startswith("## Hippo memory\n\n### Pinned\n- [verified] ")
    assert len(small) <= 80
    assert run_hook(hippo, folder, "--budget", "0", session=None) == ""
    # Another project sees the global pinned memory only.
    assert block(run_hook(hippo, empty)) == (
        "## Hippo memory\n\n### Pinned\n- [global] [verified] Prefer small commits [style]"
    )


def test_faults_print_nothing_and_exit_0_unless_strict(hippo: Hippo) -> None:
    folder = hippo.root
    env = hippo.daemon_env(HIPPO_NO_SPAWN="1", HIPPO_HOOK_TIMEOUT_MS="700")
    down = hippo.ctl(*HOOK, input=payload(folder), env=env)
    assert (down.returncode, down.stdout, down.stderr) == (0, "", "")
    strict = hippo.ctl(*HOOK, "--strict", input=payload(folder), env=env)
    assert (strict.returncode, strict.stdout) == (3, "")
    assert strict.stderr.startswith("hippoctl: hippod is not running")
    with listener(hippo.socket, welcome_then(None)) as seen:
        silent = hippo.ctl(*HOOK, input=payload(folder), env=env, timeout=30)
        silent_strict = hippo.ctl(*HOOK, "--strict", input=payload(folder), env=env, timeout=30)
    assert (silent.returncode, silent.stdout, silent.stderr) == (0, "", "")
    assert (silent_strict.returncode, silent_strict.stderr) == (3, "hippoctl: hippod stopped answering\n")
    assert isinstance(seen[0].body, m.Context) and seen[0].body.pinned_only
    assert seen[0].body.payload["prompt"] == "why does the build fail?"
    refusal = m.Error(id=1, code="failed", message="hippo.db is corrupt", exit_code=1)
    with listener(hippo.socket, welcome_then(refusal)):
        broken = hippo.ctl(*HOOK, input=payload(folder), env=env)
        broken_strict = hippo.ctl(*HOOK, "--strict", input=payload(folder), env=env)
    assert (broken.returncode, broken.stdout, broken.stderr) == (0, "", "")
    assert (broken_strict.returncode, broken_strict.stderr) == (1, "hippoctl: hippo.db is corrupt\n")


def test_a_bad_flag_is_quiet_unless_strict(hippo: Hippo) -> None:
    done = hippo.ctl(*HOOK, "--include-recent", "x", input="{}", env=hippo.daemon_env(HIPPO_NO_SPAWN="1"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    strict = hippo.ctl(*HOOK, "--strict", "--format", "xml", env=hippo.daemon_env(HIPPO_NO_SPAWN="1"))
    assert strict.returncode == 2
    assert strict.stderr == (
        "hippoctl: error: --format must be one of markdown, json, additional-context, not 'xml'\n"
    )


def test_a_number_too_large_for_the_wire_is_a_quiet_usage_error(hippo: Hippo) -> None:
    env = hippo.daemon_env(HIPPO_NO_SPAWN="1")
    huge = str(2**70)
    for flag in ("--budget", "--include-recent"):
        done = hippo.ctl(*HOOK, flag, huge, input=payload(hippo.root), env=env)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    strict = hippo.ctl(*HOOK, "--strict", "--budget", huge, input=payload(hippo.root), env=env)
    assert (strict.returncode, strict.stdout) == (2, "")
    assert strict.stderr == f"hippoctl: error: --budget is out of range: {huge}\n"


def test_a_deleted_working_directory_is_a_quiet_fault(hippo: Hippo) -> None:
    # The host's payload carries no cwd and the hook's own directory is gone: os.getcwd() fails.
    gone = os.path.join(hippo.root, "gone")
    os.mkdir(gone)
    script = (
        f"import os, runpy; os.chdir({gone!r}); os.rmdir({gone!r}); "
        "runpy.run_module('hippoctl', run_name='__main__')"
    )
    env = hippo.daemon_env(HIPPO_NO_SPAWN="1")
    for extra in ((), ("--strict",)):
        done = subprocess.run(
            [sys.executable, "-c", script, *HOOK, *extra],
            input=json.dumps({"session_id": SESSION}),
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        if not extra:
            assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        else:
            assert (done.returncode, done.stdout) == (1, "")
            assert done.stderr.startswith("hippoctl: the per-prompt hook failed: FileNotFoundError"), (
                done.stderr
            )
        os.mkdir(gone)


def test_a_secret_looking_global_row_stays_out_of_a_project(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    hippo.ok("init", "--global")
    hippo.ok("remember", "Prefer small commits", "--pin", "--global", cwd=folder)
    hippo.ok("remember", "The staging password = hunter2024xyz", "--pin", "--global", cwd=folder)
    markdown = block(run_hook(hippo, folder, session=None))
    assert "Prefer small commits" in markdown and "hunter2024xyz" not in markdown
