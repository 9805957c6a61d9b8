"""`watch`: the stored text of a failed command (ingest.md §6)."""

from __future__ import annotations

import pytest

from hippod.handlers.watch import bare_command, failure_text, first_word


@pytest.mark.parametrize(
    ("command", "bare"),
    [
        ("npm test", "npm test"),
        ("CI=1 npm test", "npm test"),
        ("  A=1 B='two words' C=\"x y\" D=a\\ b make check", "make check"),
        ("FOO= pytest -x", "pytest -x"),
        ("echo A=1", "echo A=1"),  # only leading words
        ("A=1", "A=1"),  # an assignment alone is the whole command
        ("1A=2 run", "1A=2 run"),  # not a variable name
    ],
)
def test_leading_assignments_are_stripped(command: str, bare: str) -> None:
    assert bare_command(command) == bare


def test_first_word_is_the_program_basename() -> None:
    assert first_word("/usr/local/bin/pytest -q") == "pytest"
    assert first_word("'./my tool' --flag") == "my tool"
    assert first_word("echo 'unbalanced") == "echo"
    assert first_word("") == ""


def test_failure_text_scrubs_secrets() -> None:
    assert failure_text("make", 2, "boom") == "Command 'make' failed (exit 2): boom"
    assert failure_text("make", 2, "") == "Command 'make' failed (exit 2): (no output)"
    said = failure_text("npm test", 1, "", printed=True)
    assert said == "Command 'npm test' failed (exit 1): (no error lines in its output)"
    token = "ghp_" + "A1b2" * 9
    text = failure_text(f"curl -H 'x: {token}' api", 22, f"denied for {token}")
    assert token not in text and text.count("[REDACTED:github]") == 2
