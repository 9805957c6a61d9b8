"""session-end and last-sleep (integrations.md hooks 1 and 2) against a real daemon, fed Claude
Code's SessionEnd and SessionStart payloads and real transcript files; re-read accounting
(continuity.md §7) on a crafted transcript."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.sleep_support import project, query
from e2e.transcripts import claude_records, write_jsonl

if TYPE_CHECKING:
    from e2e.harness import Hippo

SESSION = "5f0c7a8e-2a1b-4c3d-9e8f-0a1b2c3d4e5f"
WAIT = 60.0
DECISION = "We decided to keep every store connection in WAL mode for the daemon."
DEPLOY = "Deploy to staging failed because the migration step was skipped"
FLAG_ON = "The feature flag is enabled for production users"
FLAG_OFF = "The feature flag is disabled for production users"


def end(hippo: Hippo, path: str, cwd: str) -> None:
    payload = {"session_id": SESSION, "transcript_path": path, "cwd": cwd, "hook_event_name": "SessionEnd",
               "reason": "prompt_input_exit"}  # fmt: skip
    done = hippo.ctl("session-end", input=json.dumps(payload), cwd=cwd)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done


def last_sleep(hippo: Hippo, cwd: str, *args: str) -> str:
    """The hook's output; `--json` among `args` goes before the verb, where every verb takes it."""
    start = {"session_id": "next-session", "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"}
    first = ["--json"] if "--json" in args else []
    rest = [a for a in args if a != "--json"]
    done = hippo.ctl(*first, "last-sleep", *rest, input=json.dumps(start), cwd=cwd)
    assert (done.returncode, done.stderr) == (0, ""), done
    return done.stdout


def session_file(hippo: Hippo, records: list[dict[str, Any]]) -> str:
    return str(write_jsonl(Path(hippo.user_home, ".claude", "projects", "-p", f"{SESSION}.jsonl"), records))


def test_session_end_returns_and_its_job_sleeps_captures_and_keeps_the_report(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    path = session_file(hippo, claude_records(["Set up the stores"], [DECISION]))
    assert last_sleep(hippo, folder) == ""
    end(hippo, path, folder)
    assert hippo.wait_for(lambda: query(db, "SELECT count(*) FROM consolidation_runs") == [(1,)], WAIT)
    assert hippo.wait_for(
        lambda: query(db, "SELECT count(*) FROM memories WHERE source = 'capture'") == [(1,)], WAIT
    )
    [(content, session)] = query(
        db, "SELECT content, source_session_id FROM memories WHERE source = 'capture'"
    )
    assert "WAL mode" in content and session == SESSION
    # That sleep had nothing to tell: the next session is shown nothing, and the report is dropped.
    assert last_sleep(hippo, folder, "--keep") == ""
    assert json.loads(last_sleep(hippo, folder, "--json"))["report"]["active"] == 0
    assert json.loads(last_sleep(hippo, folder, "--json"))["report"] is None


def test_last_sleep_shows_a_short_summary_and_the_details_on_request(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    for text in (DEPLOY, f"{DEPLOY} again", FLAG_ON, FLAG_OFF):
        hippo.ok("remember", text, cwd=folder)
    path = session_file(hippo, claude_records(["Deploy it"], ["Done."]))
    end(hippo, path, folder)
    assert hippo.wait_for(lambda: query(db, "SELECT count(*) FROM consolidation_runs") == [(1,)], WAIT)
    assert hippo.wait_for(lambda: last_sleep(hippo, folder, "--keep") != "", WAIT)
    lines = last_sleep(hippo, folder, "--keep").splitlines()
    assert lines[0] == "=== Previous session hippo consolidation ==="
    assert lines[1:4] == [
        "Merged 4 related memories into 2:",
        f'  - "{DEPLOY}" (2 memories)',
        f'  - "{FLAG_ON}" (2 memories)',
    ]
    assert lines[4].startswith("1 open conflict (") and lines[5].endswith(" (new)")
    assert lines[6:] == ["Also removed 1 duplicate.", "=" * 40]
    for internal in ("mem_", "sem_", "phase", "replayed", "built"):
        assert internal not in "\n".join(lines)
    verbose = last_sleep(hippo, folder, "--keep", "--verbose")
    assert re.fullmatch(
        r"=== Previous session hippo consolidation ===\nRunning consolidation\.\.\.\n.*\n={40}\n",
        verbose,
        re.DOTALL,
    ), verbose
    assert "replayed mem_" in verbose  # the details are there for whoever asks
    data = json.loads(last_sleep(hippo, folder, "--keep", "--json"))
    assert data["shown"] is True and data["store"] == os.path.join(folder, ".hippo")
    assert data["report"]["semantic_created"] == 2 and len(data["report"]["merges"]) == 2
    assert last_sleep(hippo, folder).splitlines() == lines  # shown once more, then cleared
    assert last_sleep(hippo, folder) == ""


def test_in_a_folder_without_a_store_the_project_notes_go_to_the_global_store(hippo: Hippo) -> None:
    hippo.start()
    folder = os.path.join(hippo.root, "bare")
    os.makedirs(folder)
    encoded = re.sub(r"[^A-Za-z0-9]", "-", os.path.realpath(folder))
    notes = Path(hippo.user_home, ".claude", "projects", encoded, "memory")
    notes.mkdir(parents=True)
    front = "---\nname: note\ndescription: a note\ntype: project\n---\n\n"
    (notes / "build.md").write_text(front + "The build needs the vendored protobuf compiler on PATH.\n")
    path = session_file(hippo, claude_records(["Build it"], ["Done."]))
    end(hippo, path, folder)

    def imported() -> list[tuple[Any, ...]]:
        return query(hippo.db, "SELECT origin_project FROM memories WHERE source LIKE 'agent:claude-code:%'")

    assert hippo.wait_for(lambda: imported() == [("bare",)], WAIT), imported()
    assert not os.path.exists(os.path.join(folder, ".hippo"))


def _at(minute: int) -> str:
    return f"2026-03-10T12:{minute:02d}:00.000Z"


def _assistant(message_id: str, minute: int, sidechain: bool = False) -> dict[str, Any]:
    message = {"id": message_id, "role": "assistant", "content": [{"type": "text", "text": "ok"}]}
    return {"type": "assistant", "isSidechain": sidechain, "sessionId": SESSION, "timestamp": _at(minute),
            "message": message}  # fmt: skip


def _ledger(db: str, rows: list[tuple[str, str, int, int]]) -> None:
    conn = sqlite3.connect(db)
    try:
        with conn:
            for surface, ts, tokens, skipped in rows:
                conn.execute(
                    "INSERT INTO token_ledger (ts, day, tenant_id, surface, kind, session_id, tokens, "
                    "skipped) VALUES (?, ?, 'default', ?, 'sent', ?, ?, ?)",
                    (ts, ts[:10], surface, SESSION, tokens, skipped),
                )
    finally:
        conn.close()


def test_rereads_are_counted_from_the_transcript_and_replaced_on_a_second_run(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    records = [
        {
            "type": "user",
            "isSidechain": False,
            "sessionId": SESSION,
            "timestamp": _at(0),
            "message": {"role": "user", "content": "Start"},
        },
        _assistant("msg_1", 1),
        _assistant("msg_1", 2),
        _assistant("msg_2", 3),
        _assistant("msg_sub", 4, sidechain=True),
        _assistant("msg_3", 5),
        {"type": "system", "subtype": "compact_boundary", "sessionId": SESSION, "timestamp": _at(6)},
        _assistant("msg_4", 7),
        _assistant("msg_5", 8),
        _assistant("msg_6", 9),
    ]
    path = session_file(hippo, records)
    _ledger(
        hippo.db,
        [
            ("prompt_hook", "2026-03-10T12:00:30.000+00:00", 100, 0),  # calls 1, 2, 3: 2 re-reads
            ("prompt_hook", "2026-03-10T12:04:30.000+00:00", 40, 1),  # skipped: nothing was sent
            ("compact_resume", "2026-03-10T12:06:30.000+00:00", 30, 0),  # calls 4, 5, 6: 2 re-reads
        ],
    )

    def rereads() -> list[tuple[Any, ...]]:
        return query(hippo.db, "SELECT surface, day, tokens, items FROM token_ledger WHERE kind = 'reread' "
                               "ORDER BY surface")  # fmt: skip

    day = datetime(2026, 3, 10, 12, 9, tzinfo=UTC).astimezone().date().isoformat()
    expected = [("compact_resume", day, 60, 2), ("prompt_hook", day, 200, 2)]
    end(hippo, path, folder)
    assert hippo.wait_for(lambda: rereads() == expected, WAIT), rereads()
    end(hippo, path, folder)
    hippo.stop()  # shutdown waits for the second job
    assert rereads() == expected


def test_a_report_kept_as_plain_text_is_dropped_unshown(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    hippo.stop()
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('last_sleep_report', ?)",
            ("Running consolidation...\nDetails:\n  replayed mem_0123456789ab",),
        )
    conn.close()
    hippo.start()
    assert last_sleep(hippo, folder) == ""
    assert query(db, "SELECT count(*) FROM meta WHERE key = 'last_sleep_report'") == [(0,)]
