"""Lesson extraction and invalidation targets from commit subjects (ingest.md §5 steps 3, 4, 7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e.gitrepo import commit, make_repo

from hippod.ingest import gitrun
from hippod.ingest.gitlearn import Lesson, Target, lesson_of, lessons, prefix_pattern, strip_hash, target_of
from hippod.store.config import STORE_DEFAULTS

PATTERNS = STORE_DEFAULTS["gitLearnPatterns"]
PREFIX = prefix_pattern(PATTERNS)


def test_hashes_are_stripped_but_words_are_not() -> None:
    assert strip_hash("a1b2c3d fix: the cache key") == "fix: the cache key"
    assert strip_hash("0123456789abcdef0123456789abcdef01234567 x y") == "x y"
    assert strip_hash("abc123 too short") == "abc123 too short"  # 6 chars
    assert strip_hash("Revert the socket change") == "Revert the socket change"
    assert strip_hash("deadbeefcafe") == "deadbeefcafe"  # no space after it


@pytest.mark.parametrize(
    ("subject", "lesson", "rule"),
    [
        ("fix: retry the socket connect on EAGAIN", "retry the socket connect on EAGAIN", "prefix"),
        ("Fix(store)!: close the reader before the writer", "close the reader before the writer", "prefix"),
        ("hotfix dates parse as UTC everywhere", "dates parse as UTC everywhere", "prefix"),
        ("perf(recall): cache the BM25 idf table", "cache the BM25 idf table", "prefix"),
        ("We fixed the flaky watcher test on macOS", "fixed the flaky watcher test on macOS", "keyword"),
        ("Docs: resolved confusion about HIPPO_HOME", "resolved confusion about HIPPO_HOME", "keyword"),
        ("feat: migrate from webpack to vite", "migrate from webpack to vite", "migration"),
        (
            "Replace moment.js with date-fns in the UI",
            "Replace moment.js with date-fns in the UI",
            "migration",
        ),
        ("feat(api)!: remove the v1 sync endpoint", "remove the v1 sync endpoint", "migration"),
    ],
)
def test_lessons_by_rule(subject: str, lesson: str, rule: str) -> None:
    found = lesson_of(subject, PREFIX)
    assert found is not None and (found.text, found.rule) == (lesson, rule)


@pytest.mark.parametrize(
    "subject",
    [
        "feat: add the dashboard",  # feat is not a learn pattern, names no target
        "fixup the tests",  # "fixup" is not the word "fix"
        "fix: typo",  # the lesson is under 6 chars
        "Fixed!",  # the keyword needs 3+ chars after it
        "chore: remove unused imports",  # (a) matches: a lesson, but no target
        "Update README",
    ],
)
def test_subjects_without_lessons_or_with_short_ones(subject: str) -> None:
    found = lesson_of(subject, PREFIX)
    if subject.startswith("chore"):
        assert found == Lesson("remove unused imports", "prefix", None)
    else:
        assert found is None


def test_the_patterns_come_from_config() -> None:
    assert lesson_of("oops: forgot the lock file", prefix_pattern(["oops"])) == Lesson(
        "forgot the lock file", "prefix", None
    )
    assert lesson_of("fix: forgot the lock file", prefix_pattern(["oops"])) is None
    assert lesson_of("fix: forgot the lock file", prefix_pattern([])) is None


def test_long_lessons_are_dropped() -> None:
    assert lesson_of("fix: " + "x" * 499, PREFIX) is not None
    assert lesson_of("fix: " + "x" * 500, PREFIX) is None


@pytest.mark.parametrize(
    ("lesson", "target"),
    [
        ("migrate from webpack to vite", Target("migration", "webpack")),
        ("switched `Redux` to zustand", Target("migration", "Redux")),
        ("moving the cache from Redis to SQLite", Target("migration", "the cache from Redis")),
        ("fix: upgrade python 3.9 to 3.12", Target("migration", "python 3.9")),
        ("go from callbacks to async/await", Target("migration", "callbacks")),
        ("Replace moment.js with date-fns", Target("migration", "moment.js")),
        (
            'deprecate the "legacy" config loader (v1), soon',
            Target("deprecation", "the legacy config loader"),
        ),
        ("Deprecated old_api; use new_api", Target("deprecation", "old_api")),
        ("remove the v1 sync endpoint.", Target("removal", "the v1 sync endpoint")),
        ("drop support for python 3.8 and 3.9 entirely now", Target("removal", "support for python 3.8 and")),
        ("remove old tests for the v1 parser", Target("removal", "old tests for the v1")),  # 5 words
    ],
)
def test_invalidation_targets(lesson: str, target: Target) -> None:
    assert target_of(lesson) == target


@pytest.mark.parametrize(
    "lesson",
    ["remove unused imports", "drop dead code", "remove extra whitespace", "removed blank lines", "add vite"],
)
def test_tidying_removals_and_plain_lessons_have_no_target(lesson: str) -> None:
    assert target_of(lesson) is None


def test_lessons_are_unique_within_a_run() -> None:
    found, repeats = lessons(
        [
            "abcdef1 fix: retry the socket connect",
            "1234567 Fix: Retry the socket   connect",
            "feat: migrate from webpack to vite",
            "Merge branch 'main'",
        ],
        PATTERNS,
    )
    assert [f.text for f in found] == ["retry the socket connect", "migrate from webpack to vite"]
    assert repeats == 1
    assert found[1].target == Target("migration", "webpack")


async def test_a_git_without_the_filter_flag_falls_back_to_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stands in for a git older than 2.38: the first flag is one git refuses as unrecognized.
    repo = make_repo(tmp_path / "old")
    commit(repo, "fix: the parser choked on tabs", days_ago=1)
    flags = ["--no-such-since-flag", "--since"]
    monkeypatch.setattr(gitrun, "_SINCE_FLAGS", flags)
    assert await gitrun.commit_subjects(str(repo), 7) == ["fix: the parser choked on tabs"]
    assert flags == ["--since"]  # remembered for the next call
