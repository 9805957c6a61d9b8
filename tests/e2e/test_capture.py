"""End-to-end: `capture --stdin|--file|--last-session` through the real daemon (ingest.md §3)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.transcripts import SESSION, claude_records, codex_records, write_jsonl

if TYPE_CHECKING:
    from e2e.harness import Hippo

CONVERSATION = """\
We decided to keep a single writer connection per store for every write.
Never run the migrations by hand against a production database file.
Gotcha: the watcher only sees the Claude home if it existed when the daemon started.
Prefer msgspec structs over plain dicts for every message on the wire.
The weather was nice today and nothing else happened.
"""
EXPECTED = [
    ("decision", "keep a single writer connection per store for every write"),
    ("rule", "Never run the migrations by hand against a production database file"),
    ("error", "the watcher only sees the Claude home if it existed when the daemon started"),
    ("preference", "Prefer msgspec structs over plain dicts for every message on the wire"),
]


def _rows(db: str) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            "SELECT content, tags, source, confidence, layer, half_life_days, emotional_valence, "
            "source_session_id FROM memories ORDER BY rowid"
        ).fetchall()
    return [dict(r) for r in rows]


def test_capture_stdin_stores_each_category_once(hippo: Hippo) -> None:
    hippo.start()
    done = hippo.ctl("capture", "--stdin", input=CONVERSATION)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Captured 4 items (0 skipped as duplicates)\n"
    rows = _rows(hippo.db)
    assert [r["content"] for r in rows] == [text for _, text in EXPECTED]
    for row, (category, _) in zip(rows, EXPECTED, strict=True):
        assert row["source"] == "capture" and row["confidence"] == "observed" and row["layer"] == "episodic"
        assert row["tags"] == f'["{category}","captured"]'
        if category == "error":
            assert row["half_life_days"] == 730 and row["emotional_valence"] == "negative"
        else:
            assert row["half_life_days"] == 365 and row["emotional_valence"] == "neutral"

    # The same text again (case and punctuation changed): everything is already known.
    again = hippo.ok("capture", "--stdin", input=CONVERSATION.upper().replace(".", "!"))
    assert again.stdout == "Captured 0 items (4 skipped as duplicates)\n"
    assert len(_rows(hippo.db)) == 4
    entries = hippo.json("audit", "list", "--op", "capture")["entries"]
    assert len(entries) == 4


def test_dry_run_lists_and_writes_nothing(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("remember", "keep a single writer connection per store for every write")
    done = hippo.ok("capture", "--stdin", "--dry-run", input=CONVERSATION)
    assert done.stdout.splitlines() == [
        "Dry run: nothing was changed.",
        *(f"[{category}] {text}" for category, text in EXPECTED[1:]),
        "Would capture 3 items (1 skipped as a duplicate)",
    ]
    assert len(_rows(hippo.db)) == 1


def test_capture_json_reply_and_rejected_values(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("reject", "--value", EXPECTED[1][1], "--reason", "not a rule we keep")
    done = hippo.ctl("--json", "capture", "--stdin", input=CONVERSATION)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["captured"] == 3 and data["rejected"] == 1 and data["skipped"] == 0
    assert [(i["category"], i["text"]) for i in data["items"]] == [EXPECTED[0], *EXPECTED[2:]]
    assert all(i["id"].startswith("mem_") for i in data["items"])
    assert "1 item was rejected earlier and not stored" in done.stderr
    assert EXPECTED[1][1] not in [r["content"] for r in _rows(hippo.db)]


def test_secrets_are_never_captured(hippo: Hippo) -> None:
    hippo.start()
    text = "Important: the deploy token is ghp_" + "a1B2" * 9 + " for the staging cluster.\n"
    done = hippo.ok("capture", "--stdin", input=text)
    assert done.stdout == "Captured 0 items (0 skipped as duplicates)\n"
    assert "1 item looked like a secret and was not stored" in done.stderr
    assert _rows(hippo.db) == []


def test_capture_file_and_its_errors(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    notes = tmp_path / "notes.md"
    notes.write_text("## Requirements\n- Export writes one JSON document with every live memory\n")
    done = hippo.ok("capture", "--file", "notes.md", cwd=str(tmp_path))
    assert done.stdout == "Captured 1 item (0 skipped as duplicates)\n"
    assert _rows(hippo.db)[0]["tags"] == '["spec","captured"]'

    missing = hippo.ctl("capture", "--file", str(tmp_path / "gone.txt"))
    assert missing.returncode == 1
    assert missing.stderr.strip() == f"hippoctl: cannot read {tmp_path / 'gone.txt'}: no such file"
    folder = hippo.ctl("capture", "--file", str(tmp_path))
    assert (
        folder.returncode == 1
        and folder.stderr.strip() == f"hippoctl: cannot read {tmp_path}: it is a directory"
    )
    locked = tmp_path / "locked.txt"
    locked.write_text("Never store this one: it cannot be read anyway\n")
    locked.chmod(0)
    if not os.access(locked, os.R_OK):  # root reads everything
        denied = hippo.ctl("capture", "--file", str(locked))
        assert denied.returncode == 1
        assert denied.stderr.strip() == f"hippoctl: cannot read {locked}: permission denied"
    huge = tmp_path / "huge.txt"
    with open(huge, "wb") as handle:
        handle.truncate(64 * 1024 * 1024 + 1)  # sparse: no disk used
    big = hippo.ctl("capture", "--file", str(huge))
    assert big.returncode == 1
    assert big.stderr.startswith(f"hippoctl: cannot read {huge}: it is 64.0 MiB, over the 64 MiB limit")
    assert len(_rows(hippo.db)) == 1


def test_last_session_reads_the_transcript(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    path = write_jsonl(
        tmp_path / "t.jsonl",
        claude_records(
            ["We decided to move the job queue onto the Postgres cluster in March."],
            ["Done. Watch out: the queue table needs a partial index on pending jobs."],
        ),
    )
    done = hippo.ok("capture", "--last-session", "--transcript", str(path))
    assert done.stdout == "Captured 2 items (0 skipped as duplicates)\n"
    rows = _rows(hippo.db)
    assert [r["content"] for r in rows] == [
        "move the job queue onto the Postgres cluster in March",
        "the queue table needs a partial index on pending jobs",
    ]
    assert {r["source_session_id"] for r in rows} == {SESSION}
    # Nothing from the tool results, thinking or injected text was captured.
    assert len(rows) == 2

    rollout = write_jsonl(
        tmp_path / "rollout.jsonl",
        codex_records(["Make sure to bump the protocol number when a field changes meaning."], []),
    )
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"\x00\x01 not a transcript\n")
    nothing = hippo.ok("capture", "--last-session", "--transcript", str(junk))
    assert nothing.stdout == "Captured 0 items (0 skipped as duplicates)\n"
    assert nothing.stderr.splitlines()[0] == f"no user or assistant messages found in {junk}"
    codex = hippo.ok("capture", "--last-session", "--transcript", str(rollout))
    assert codex.stdout == "Captured 1 item (0 skipped as duplicates)\n"
    assert _rows(hippo.db)[-1]["source_session_id"] == "codex-session-7"


def test_last_session_defaults_to_the_newest_claude_transcript(hippo: Hippo, tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    hippo.start(env=hippo.daemon_env(CLAUDE_CONFIG_DIR=str(claude)))
    none = hippo.ctl("capture", "--last-session")
    assert none.returncode == 1
    assert none.stderr.strip() == (
        f"hippoctl: no Claude Code transcript (*.jsonl) under {claude}/projects "
        "(try: hippoctl capture --last-session --transcript <file>)"
    )
    old = write_jsonl(
        claude / "projects" / "-home-dev-a" / "old.jsonl",
        claude_records(["Never deploy the old branch from the laptop build machine."], []),
    )
    os.utime(old, (1_000_000, 1_000_000))
    write_jsonl(
        claude / "projects" / "-home-dev-b" / "new.jsonl",
        claude_records(["Always deploy from the CI pipeline with the signed artifacts."], []),
    )
    done = hippo.ok("capture", "--last-session")
    assert done.stdout == "Captured 1 item (0 skipped as duplicates)\n"
    assert [r["content"] for r in _rows(hippo.db)] == [
        "Always deploy from the CI pipeline with the signed artifacts"
    ]


def test_concurrent_captures_store_each_item_once(hippo: Hippo) -> None:
    hippo.start()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "hippoctl", "capture", "--stdin"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=hippo.env,
            cwd=hippo.root,
        )
        for _ in range(4)
    ]
    outputs = [p.communicate(CONVERSATION, timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    stored = sum(int(out.split()[1]) for out, _ in outputs)
    assert stored == 4
    assert sorted(r["content"] for r in _rows(hippo.db)) == sorted(text for _, text in EXPECTED)


def test_capture_global_from_a_project(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    project = tmp_path / "proj"
    project.mkdir()
    hippo.ok("init", cwd=str(project))
    hippo.ok("capture", "--stdin", cwd=str(project), input=CONVERSATION)
    hippo.ok(
        "capture", "--stdin", "--global", cwd=str(project), input=EXPECTED[0][1].join(["We decided to ", "."])
    )
    assert len(_rows(str(project / ".hippo" / "hippo.db"))) == 4
    assert [r["content"] for r in _rows(hippo.db)] == [EXPECTED[0][1]]
