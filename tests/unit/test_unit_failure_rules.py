"""capture-error's pure rules (ingest.md §7): payload, classification table, hashes, memory text."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from hippod.ingest import failure_rules as rules

GITHUB = "ghp_" + "a" * 36


def payload(**fields: Any) -> dict[str, Any]:
    """A Claude Code PostToolUseFailure payload."""
    base: dict[str, Any] = {
        "session_id": "abc123",
        "transcript_path": "/home/u/.claude/projects/p/abc123.jsonl",
        "cwd": "/home/u/p",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "npm test", "description": "Run the tests"},
        "tool_use_id": "toolu_01",
        "error": "Command failed with exit code 1",
        "is_interrupt": False,
    }
    base.update(fields)
    return base


def outcome(**fields: Any) -> str | None:
    return rules.classify(rules.parse_payload(payload(**fields)))


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"is_interrupt": True}, "interrupt"),
        ({"error": "The user interrupted the tool call"}, "interrupt"),
        ({"error": "Operation was Interrupted by user"}, "interrupt"),
        ({"error": "User cancelled the command"}, "interrupt"),
        ({"error": "user aborted"}, "interrupt"),
        ({"error": "Permission denied by the user for Bash"}, "permission_declined"),
        ({"error": "User declined this action"}, "permission_declined"),
        ({"error": "user rejected the edit"}, "permission_declined"),
        ({"error": "The user doesn't want to proceed with this tool use."}, "permission_declined"),
        ({"error": "The tool use was rejected by the user"}, "permission_declined"),
        ({"tool_name": "Grep", "error": "No matches found"}, "empty_search"),
        ({"tool_name": "Glob", "error": "No files found"}, "empty_search"),
        ({"tool_name": "LS", "error": "found 0 entries"}, "empty_search"),
        ({"tool_name": "WebSearch", "error": "No results found for query"}, "empty_search"),
        ({"tool_name": "ToolSearch", "error": "no RESULTS found"}, "empty_search"),
        # Only the search tools count an empty result as noise.
        ({"tool_name": "Bash", "error": "No matches found"}, None),
        ({"tool_name": "Grep", "error": "regex parse error: unclosed group"}, None),
        ({"error": "ModuleNotFoundError: No module named 'foo'"}, None),
        # The spec's pattern also takes the OS's "Permission denied" as a declined permission.
        ({"error": "bash: ./run.sh: Permission denied"}, "permission_declined"),
    ],
)
def test_classification_table(fields: dict[str, Any], expected: str | None) -> None:
    assert outcome(**fields) == expected


def test_first_match_wins() -> None:
    # Interrupt beats a declined permission, which beats an empty search.
    assert outcome(is_interrupt=True, error="permission denied") == "interrupt"
    assert outcome(tool_name="Grep", error="user denied; no matches found") == "permission_declined"
    assert outcome(error="interrupted; user denied") == "interrupt"


def test_is_interrupt_must_be_true_itself() -> None:
    assert outcome(is_interrupt="yes") is None
    assert outcome(is_interrupt=1) is None


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (None, "no input"),
        ("plain text, not JSON", "not a JSON object"),
        ([1, 2], "not a JSON object"),
        ({"error": "boom"}, "no tool_name"),
        ({"tool_name": " ", "error": "boom"}, "no tool_name"),
        ({"tool_name": "Bash"}, "no error text"),
        ({"tool_name": "Bash", "error": 42}, "no error text"),
        ({"tool_name": "Bash", "error": "   "}, "no error text"),
    ],
)
def test_malformed_payloads_name_the_problem(value: Any, problem: str) -> None:
    with pytest.raises(rules.MalformedPayload, match=problem):
        rules.parse_payload(value)


def test_parse_keeps_what_capture_error_needs() -> None:
    failure = rules.parse_payload(payload(session_id="  ", tool_input="not a dict"))
    assert failure.session_id is None
    assert failure.command is None
    failure = rules.parse_payload(payload())
    assert (failure.tool, failure.session_id, failure.command) == ("Bash", "abc123", "npm test")


def test_exact_hash_is_sha256_of_the_raw_error() -> None:
    error = "Error: ENOENT /tmp/x 42"
    assert rules.exact_hash(error) == hashlib.sha256(error.encode()).hexdigest()
    assert rules.exact_hash(error) != rules.exact_hash(error + " ")


@pytest.mark.parametrize(
    ("error", "shape"),
    [
        ("Error  on\tline 42\n", "error on line 0"),
        ("FileNotFoundError: /home/u/proj/src/app.py", "filenotfounderror: <path>"),
        ("cannot open C:\\Users\\u\\x.txt", "cannot open <path>"),
        ("see ~/work/a.log: bad", "see <path>: bad"),
        ("commit 3f2a9c1b7e not found", "commit <hex> not found"),
        ("deadbeef is a word here", "<hex> is a word here"),  # 8 hex letters are a hex run too
        ("id a1b2c3d", "id a0b0c0d"),  # 7 hex chars stay, digits zeroed
        ("object 1234567890ab", "object 0ab"),  # the number is zeroed first, leaving no hex run
        ("ratio 3/4 is fine", "ratio 0/0 is fine"),
        ("see https://example.com/a/b", "see https:<path>"),
    ],
)
def test_shape_normalisation(error: str, shape: str) -> None:
    assert rules.shape(error) == shape


def test_shape_hash_groups_repeats_and_splits_different_errors() -> None:
    a = "ModuleNotFoundError at /home/u/p/a.py:12 (pid 4242, sha 9f8e7d6c5b4a)"
    b = "modulenotfounderror at /srv/other/b.py:7  (pid 17, sha 0f1e2d3c4b5a)"
    c = "ImportError at /home/u/p/a.py:12 (pid 4242, sha 9f8e7d6c5b4a)"
    assert rules.shape_hash(a) == rules.shape_hash(b)
    assert rules.shape_hash(a) != rules.shape_hash(c)
    assert rules.shape_hash(a) == hashlib.sha256(rules.shape(a).encode()).hexdigest()


def text_of(failure: rules.ToolFailure) -> str:
    return rules.memory_text(failure, cwd="/home/u/p", home="/home/u")


def test_memory_text_keeps_the_salient_lines_and_cuts() -> None:
    failure = rules.parse_payload(payload(error="line one\n\n  line two", tool_input={"command": "make  x"}))
    # No line looks like an error: the last lines serve, on one line.
    assert text_of(failure) == "Bash failed: line one | line two (command: make x)"
    assert rules.tags(failure) == ["error", "auto-captured", "tool:bash"]

    long = rules.parse_payload(payload(tool_name="Edit", error="x" * 1000, tool_input={"file_path": "/a"}))
    assert text_of(long) == "Edit failed: " + "x" * 199 + "…"
    assert rules.tags(long)[-1] == "tool:edit"

    cmd = rules.parse_payload(payload(error="boom", tool_input={"command": "c" * 300}))
    assert text_of(cmd) == "Bash failed: boom (command: " + "c" * 120 + ")"


def test_memory_text_is_the_error_lines_as_watch_keeps_them() -> None:
    error = (
        "Exit code 1\n"
        "Error: cannot open /home/u/p/data/cart.json\n"
        "    at Object.<anonymous> (/home/u/p/test.js:3:9)\n"
        "npm ERR! code 1\n"
        "npm ERR! A complete log of this run can be found in:\n"
        "npm ERR!     /home/u/.npm/_logs/2026-12-02T02_31_11_123Z-debug-0.log\n"
    )
    failure = rules.parse_payload(payload(error=error))
    assert text_of(failure) == "Bash failed: Error: cannot open data/cart.json (command: npm test)"
    # The payload's own folder is the one paths are written relative to.
    assert failure.cwd == "/home/u/p"
    assert rules.parse_payload(payload(cwd="relative")).cwd is None


def test_memory_text_scrubs_secrets_in_error_and_command() -> None:
    failure = rules.parse_payload(
        payload(
            error=f"401 Unauthorized for token {GITHUB}",
            tool_input={"command": f"curl -H 'Authorization: Bearer {GITHUB}' https://api"},
        )
    )
    text = text_of(failure)
    assert GITHUB not in text
    assert "[REDACTED:github]" in text
    # A secret across the point where a long line is cut is scrubbed before the cut.
    cut = rules.parse_payload(payload(error="Error: " + "x" * 160 + f" token {GITHUB}"))
    assert GITHUB[:12] not in text_of(cut)
