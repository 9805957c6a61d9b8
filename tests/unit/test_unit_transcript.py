"""Transcript summarising for `capture --last-session` (ingest.md §3), on real example files."""

from __future__ import annotations

import os
from pathlib import Path

from e2e.transcripts import SESSION, claude_records, codex_records, write_jsonl

from hippod.ingest import transcript


def test_claude_transcript_keeps_typed_prompts_and_assistant_text(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "s.jsonl",
        claude_records(
            ["Fix the flaky socket test please", "Now ship it"],
            ["I made the socket test wait for the lock file", "Shipped in commit abc123"],
        ),
    )
    talk = transcript.parse(path.read_bytes())
    assert talk.user == ["Fix the flaky socket test please", "Now ship it"]
    assert talk.assistant == ["I made the socket test wait for the lock file", "Shipped in commit abc123"]
    assert talk.session_id == SESSION
    text = transcript.summary(talk)
    assert "tool output" not in text and "secret plan" not in text and "meta prompt" not in text
    assert "/clear" not in text and "Caveat" not in text
    assert text == (
        "# Session Summary\n## User Messages\n- Fix the flaky socket test please\n- Now ship it\n"
        "## Assistant Responses\n- I made the socket test wait for the lock file\n"
        "- Shipped in commit abc123\n"
    )


def test_codex_rollout_keeps_input_and_output_text(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "rollout.jsonl",
        codex_records(["Port the parser to msgspec"], ["Done: the parser now uses msgspec structs"]),
    )
    talk = transcript.parse(path.read_bytes())
    assert talk.user == ["Port the parser to msgspec"]
    assert talk.assistant == ["Done: the parser now uses msgspec structs"]  # event_msg copies not doubled
    assert talk.session_id == "codex-session-7"


def test_summary_keeps_the_last_messages_cut_to_size() -> None:
    talk = transcript.Conversation(
        user=[f"user message {i} " + "u" * 600 for i in range(25)],
        assistant=[f"assistant message {i} " + "a" * 2500 for i in range(12)],
    )
    lines = transcript.summary(talk).splitlines()
    users = [line for line in lines if line.startswith("- user message")]
    assistants = [line for line in lines if line.startswith("- assistant message")]
    assert [u.split()[3] for u in users] == [str(i) for i in range(5, 25)]
    assert [a.split()[3] for a in assistants] == [str(i) for i in range(2, 12)]
    assert all(len(u) == 2 + 500 for u in users) and all(len(a) == 2 + 2000 for a in assistants)


def test_torn_and_foreign_lines_are_skipped() -> None:
    data = b'{"type": "user", "message": {"content": "Keep this prompt"}}\n[1, 2]\n\n{"type": "user", "mess'
    assert transcript.parse(data).user == ["Keep this prompt"]


def test_a_line_nested_too_deeply_is_skipped() -> None:
    data = b"[" * 100_000 + b'\n{"type": "user", "message": {"content": "Keep this prompt"}}\n'
    assert transcript.parse(data).user == ["Keep this prompt"]


def test_newest_transcript_under_the_claude_home(tmp_path: Path) -> None:
    assert transcript.newest_transcript(str(tmp_path)) is None
    old = write_jsonl(tmp_path / "projects" / "-home-dev-a" / "old.jsonl", [])
    new = write_jsonl(tmp_path / "projects" / "-home-dev-b" / "new.jsonl", [])
    write_jsonl(tmp_path / "projects" / "-home-dev-b" / "memory" / "deeper.jsonl", [])  # not */*.jsonl
    os.utime(old, (1_000, 1_000))
    os.utime(new, (2_000, 2_000))
    assert transcript.newest_transcript(str(tmp_path)) == str(new)
    assert transcript.claude_home({"CLAUDE_CONFIG_DIR": str(tmp_path)}) == str(tmp_path)
    assert transcript.claude_home({"HOME": "/nowhere"}).endswith("/.claude")
