"""Capture's extraction rules (ingest.md §3): spec sections, sentence split, the four category
tables in order, cleaning, worthiness and de-duplication."""

from __future__ import annotations

import pytest

from hippod.ingest.extract import Item, batch_key, classify, clean, extract, sentences, spec_items, store_key

MATCHES = [
    # decision
    ("We decided to move the job queue onto Postgres", "decision", "move the job queue onto Postgres"),
    ("I've decided to drop the legacy sync endpoint", "decision", "drop the legacy sync endpoint"),
    ("let's decide to ship weekly", "decision", "ship weekly"),
    ("Let's go with SQLite in WAL mode", "decision", "SQLite in WAL mode"),
    ("we should use uv for the lockfile", "decision", "uv for the lockfile"),
    ("We'll switch to ruff for formatting", "decision", "ruff for formatting"),
    ("In the end we went with msgpack framing", "decision", "msgpack framing"),
    ("The plan is to split the daemon into workers", "decision", "to split the daemon into workers"),
    ("Decision: the socket lives in XDG_RUNTIME_DIR", "decision", "the socket lives in XDG_RUNTIME_DIR"),
    # rule
    ("Never force-push to the release branch", "rule", "Never force-push to the release branch"),
    ("you must not log memory text", "rule", "must not log memory text"),
    ("Do not ever commit the .env file", "rule", "Do not ever commit the .env file"),
    ("The rule is: tests hit real sockets", "rule", ": tests hit real sockets"),
    ("Important: migrations are append-only", "rule", "migrations are append-only"),
    ("Make sure to run mypy before pushing", "rule", "run mypy before pushing"),
    # error
    (
        "Gotcha: the FTS index needs a rebuild after restore",
        "error",
        "the FTS index needs a rebuild after restore",
    ),
    ("Watch out: launchd ignores the PATH of the shell", "error", "launchd ignores the PATH of the shell"),
    ("this broke the nightly build on macOS", "error", "this broke the nightly build on macOS"),
    ("The problem was a stale lock file in /run", "error", "a stale lock file in /run"),
    ("Easy to miss: the timeout is in ms", "error", "the timeout is in ms"),
    # preference
    ("Prefer pathlib over os.path in new code", "preference", "Prefer pathlib over os.path in new code"),
    ("use httpx instead of requests", "preference", "use httpx instead of requests"),
    ("Avoid global state in handlers", "preference", "Avoid global state in handlers"),
    ("We're using pytest-asyncio in auto mode", "preference", "We're using pytest-asyncio in auto mode"),
    ("the stack is FastAPI and SQLite", "preference", "the stack is FastAPI and SQLite"),
]

NO_MATCH = [
    "The build passed on the second try.",
    "We talked about Postgres for a while",  # no decision verb
    "Decided.",  # too short for any group
    "going with",  # nothing after it
    "Sometimes it is fine to retry",  # no rule keyword
    "error handling lives in errors.py",  # "error" without the colon
    "The issue tracker is on GitHub",  # not "the issue is/was"
    "I use vim",  # preference needs "instead of / over / not" or the longer forms
    "Neverland is a place",  # \b keeps "never" a word
]


@pytest.mark.parametrize(("sentence", "category", "text"), MATCHES)
def test_each_category_matches_its_sentences(sentence: str, category: str, text: str) -> None:
    assert classify(sentence) == Item(category, text)


@pytest.mark.parametrize("sentence", NO_MATCH)
def test_sentences_without_a_pattern_yield_nothing(sentence: str) -> None:
    assert classify(sentence) is None


def test_categories_are_tried_in_order() -> None:
    # Both a decision and a rule: the decision table comes first.
    assert classify("We decided to always pin the toolchain version")
    assert classify("We decided to always pin the toolchain version") == Item(
        "decision", "always pin the toolchain version"
    )
    # A rule keyword and a preference: rule first.
    assert classify("Never use requests instead of httpx here") == Item(
        "rule", "Never use requests instead of httpx here"
    )
    # An error pattern beats the preference table.
    assert classify("Careful: avoid the cached wheel on CI") == Item("error", "avoid the cached wheel on CI")


def test_matching_ignores_case_and_the_group_is_capped() -> None:
    assert classify("DECISION: USE THE WRITER CONNECTION") == Item("decision", "USE THE WRITER CONNECTION")
    long = "always " + "x" * 300
    item = classify(long)
    assert item is not None and len(item.text) == len("always ") + 200


def test_sentences_split_at_ends_and_newlines_and_drop_short_pieces() -> None:
    text = "First one here. Second one! Yes?\nFourth line\nok.\n  \nSixth piece"
    assert sentences(text) == ["First one here.", "Second one!", "Fourth line", "Sixth piece"]
    assert sentences("Hi you. Yes?") == ["Hi you."]  # "Yes?" is 4 characters
    assert sentences("v1.2.3 shipped") == ["v1.2.3 shipped"]  # no whitespace after the dots


def test_clean_strips_leading_marks_and_trailing_punctuation() -> None:
    assert clean(": - the index is rebuilt nightly;.") == "the index is rebuilt nightly"
    assert clean("  keep the inner. dots!?") == "keep the inner. dots"


def test_spec_sections_collect_bullets_until_the_next_heading() -> None:
    text = (
        "Intro line\n"
        "- not in a section\n"
        "## Requirements\n"
        "- Export writes JSON with a hippod_version field\n"
        "* Import reads the JSON export back\n"
        "1. Dry run prints each item\n"
        "plain text inside\n"
        "## Background\n"
        "- after the heading: not a spec item\n"
        "todo:\n"
        "- wire the CLI verb into the dispatcher\n"
        "Next Steps:\n"
        "- closed by a Title: line\n"
    )
    assert spec_items(text) == [
        "Export writes JSON with a hippod_version field",
        "Import reads the JSON export back",
        "Dry run prints each item",
        "wire the CLI verb into the dispatcher",
    ]
    assert spec_items("Plan\n- a\nnotes:\n- b") == ["a", "b"]
    assert spec_items("The plan is simple\n- not a section") == []


def test_extract_keeps_worthy_items_in_order_without_repeats() -> None:
    text = (
        "Features:\n"
        "- always run the full test suite before a release tag\n"
        "- ok\n"
        "\n"
        "We decided to keep one writer connection per store for all writes. "
        "we decided to keep ONE writer connection per store   for all writes. "
        "Never commit directly to main.\n"
        "Gotcha: the watcher needs the Claude home to exist at start.\n"
        "Avoid it.\n"
    )
    assert extract(text) == [
        Item("spec", "always run the full test suite before a release tag"),
        Item("decision", "keep one writer connection per store for all writes"),
        Item("error", "the watcher needs the Claude home to exist at start"),
    ]
    # "Never commit directly to main" is under 40 chars with nothing specific: not worthy.
    # The spec bullet also reads as a rule; within a batch it is one item.


@pytest.mark.parametrize(
    "text",
    [
        "Decision: to be done later on",  # starts like a fragment
        "Important: release v1.2.3 tomorrow",  # release noise
        "The rule is: do it the way",  # fewer than 2 substantive words
        "Always check it twice",  # short and unspecific
    ],
)
def test_unworthy_items_are_dropped(text: str) -> None:
    assert classify(text) is not None
    assert extract(text) == []


def test_worthy_versions_of_the_same_items_are_kept() -> None:
    assert extract("Always check the `ttl` twice") == [Item("rule", "Always check the `ttl` twice")]
    assert extract("Important: the release runbook lives in docs/release.md") == [
        Item("rule", "the release runbook lives in docs/release.md")
    ]


def test_the_two_keys() -> None:
    assert batch_key("  Keep ONE   writer ") == "keep one writer"
    assert store_key("Keep ONE writer, always!") == "keep one writer always"
    assert store_key("don't   use `eval`") == "dont use eval"
