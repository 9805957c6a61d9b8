"""End-to-end: `learn --git` against real git repositories made in the test (ingest.md §5)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.gitrepo import commit, make_repo
from hippod.base.pathtags import path_tags

if TYPE_CHECKING:
    from e2e.harness import Hippo


def _rows(db: str, where: str = "1") -> list[dict[str, Any]]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(f"SELECT * FROM memories WHERE {where} ORDER BY rowid").fetchall()
    return [dict(r) for r in rows]


def _project(hippo: Hippo, path: Path) -> str:
    """A git repository with its own store; returns the store's database path."""
    make_repo(path)
    hippo.ok("init", cwd=str(path))
    return str(path / ".hippo" / "hippo.db")


def test_learns_lessons_and_invalidates_on_migration(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    repo = tmp_path / "webapp"
    db = _project(hippo, repo)
    old = json.loads(
        hippo.ok(
            "--json", "remember", "The frontend is bundled with webpack and its dev server", cwd=str(repo)
        ).stdout
    )["id"]
    pinned = json.loads(
        hippo.ok("--json", "remember", "webpack config lives in build/", "--pin", cwd=str(repo)).stdout
    )["id"]
    # Oldest first, as history is made (git log stops walking at commits older than --since).
    commit(repo, "fix: the retry loop forgot to back off", days_ago=20)  # outside 7 days
    commit(repo, "Fix: close the reader connection before the writer", days_ago=4)
    commit(repo, "feat: add the dashboard page", days_ago=3)
    commit(repo, "feat: migrate from webpack to vite", days_ago=3)
    commit(repo, "a1b2c3d4 We fixed the flaky watcher test on macOS", days_ago=2)
    commit(repo, "fix(store): close the reader connection before the writer", days_ago=1)  # same lesson

    done = hippo.ok("learn", "--git", cwd=str(repo))
    assert done.stdout.splitlines() == [
        'Invalidated 1 memory referencing "webpack"',
        "Learned: close the reader connection before the writer",
        "Learned: fixed the flaky watcher test on macOS",
        "Learned: migrate from webpack to vite",
        "Learned 3 lessons from 5 commits in 1 repo (1 duplicate skipped)",
    ]
    lessons = _rows(db, "source = 'git-learn'")
    assert [r["content"] for r in lessons] == [
        "close the reader connection before the writer",
        "fixed the flaky watcher test on macOS",
        "migrate from webpack to vite",
    ]
    tags = path_tags(str(repo))
    for row in lessons[:2]:
        assert json.loads(row["tags"]) == ["error", "git-learned", *tags]
        assert row["half_life_days"] == 730 and row["emotional_valence"] == "negative"
        assert row["confidence"] == "observed" and row["layer"] == "episodic"
    assert json.loads(lessons[2]["tags"]) == ["git-learned", "migration", *tags]
    assert lessons[2]["half_life_days"] == 365 and lessons[2]["emotional_valence"] == "neutral"
    assert "invalidated" not in lessons[2]["tags"]  # this run's own lesson is left alone

    (stale,) = _rows(db, f"id = '{old}'")
    assert stale["confidence"] == "stale" and stale["half_life_days"] == 182
    assert "invalidated" in json.loads(stale["tags"])
    (kept,) = _rows(db, f"id = '{pinned}'")
    assert kept["confidence"] == "verified" and "invalidated" not in kept["tags"]

    audit = {e["op"]: e for e in hippo.json("audit", "list", cwd=str(repo))["entries"]}
    assert audit["invalidate"]["target"] == old
    assert audit["invalidate"]["metadata"] == {"pattern": "webpack", "reason": "learn --git: migration"}
    learned = hippo.json("audit", "list", "--op", "git_learn", cwd=str(repo))["entries"]
    assert sorted(e["target"] for e in learned) == sorted(r["id"] for r in lessons)

    # A second run learns nothing new and weakens nothing again.
    again = hippo.ok("learn", "--git", cwd=str(repo))
    assert again.stdout.splitlines() == ["Learned 0 lessons from 5 commits in 1 repo (4 duplicates skipped)"]
    assert _rows(db, f"id = '{old}'")[0]["half_life_days"] == 182
    # A longer window reaches the older commit.
    wider = hippo.json("learn", "--git", "--days", "30", cwd=str(repo))
    assert wider["lessons"] == ["the retry loop forgot to back off"] and wider["commits"] == 6


def test_repos_list_routes_lessons_to_each_repos_store(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    own_db = _project(hippo, tmp_path / "alpha")
    plain = make_repo(tmp_path / "beta")
    commit(tmp_path / "alpha", "fix: alpha leaks a file handle per request")
    commit(plain, "revert: beta cache warmup made startup slower")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = hippo.ctl("learn", "--git", "--repos", "../alpha, ../beta", cwd=str(elsewhere))
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.splitlines()[-1] == "Learned 2 lessons from 2 commits in 2 repos (0 duplicates skipped)"
    )
    assert [r["content"] for r in _rows(own_db, "source = 'git-learn'")] == [
        "alpha leaks a file handle per request"
    ]
    # No store above cwd: beta's lesson goes to the global store.
    assert [r["content"] for r in _rows(hippo.db, "source = 'git-learn'")] == [
        "beta cache warmup made startup slower"
    ]


def test_an_older_dated_commit_on_top_hides_no_newer_lesson(hippo: Hippo, tmp_path: Path) -> None:
    # A cherry-pick or a merged old branch puts an older date above newer commits; the walk must
    # filter by date, not stop at the first commit older than the cutoff.
    hippo.start()
    db = _project(hippo, tmp_path / "gamma")
    commit(tmp_path / "gamma", "fix: the exporter dropped rows with a null price", days_ago=2)
    commit(tmp_path / "gamma", "fix: the importer ignored the header row", days_ago=40)
    done = hippo.ctl("learn", "--git", "--days", "7", cwd=str(tmp_path / "gamma"))
    assert done.returncode == 0, done.stderr
    assert [r["content"] for r in _rows(db, "source = 'git-learn'")] == [
        "the exporter dropped rows with a null price"
    ]


def test_bad_repositories_fail_before_anything_is_written(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    good = make_repo(tmp_path / "good")
    commit(good, "fix: the good repo has a lesson to learn")
    plain = tmp_path / "plain"
    plain.mkdir()

    outside = hippo.ctl("learn", "--git", cwd=str(plain))
    assert outside.returncode == 1
    assert outside.stderr.strip() == (
        f"hippoctl: {plain} is not in a git repository (try: learn --git --repos <path>)"
    )
    mixed = hippo.ctl("learn", "--git", "--repos", f"{good},{plain}")
    assert mixed.returncode == 1 and f"{plain} is not in a git repository" in mixed.stderr
    missing = hippo.ctl("learn", "--git", "--repos", str(tmp_path / "gone"))
    assert missing.returncode == 1
    assert missing.stderr.strip() == f"hippoctl: {tmp_path / 'gone'}: no such directory"
    assert hippo.ctl("learn", "--git", "--days", "0").returncode == 2
    assert not os.path.exists(hippo.db) or _rows(hippo.db) == []

    empty = make_repo(tmp_path / "empty")
    nothing = hippo.ok("learn", "--git", cwd=str(empty))
    assert nothing.stdout == "Learned 0 lessons from 0 commits in 1 repo (0 duplicates skipped)\n"


def test_missing_git_is_a_clear_error(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start(env=hippo.daemon_env(PATH=str(tmp_path / "no-bin")))
    repo = make_repo(tmp_path / "repo")
    done = hippo.ctl("learn", "--git", cwd=str(repo))
    assert done.returncode == 1
    assert done.stderr.strip() == "hippoctl: git is not installed (no git on the daemon's PATH)"


def test_rejected_lessons_are_not_stored(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    repo = make_repo(tmp_path / "repo")
    commit(repo, "fix: the importer drops the last line of a file")
    hippo.ok("reject", "--value", "the importer drops the last line of a file", "--reason", "not true")
    done = hippo.ctl("--json", "learn", "--git", cwd=str(repo))
    data = json.loads(done.stdout)
    assert (data["learned"], data["rejected"]) == (0, 1)
    assert "1 lesson was rejected earlier" in done.stderr


def test_daily_run_learns_from_a_registered_workspace(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    repo = tmp_path / "ws"
    db = _project(hippo, repo)
    commit(repo, "fix: an older lesson that the daily window misses", days_ago=3)
    commit(repo, "hotfix: the scheduler skipped runs after a DST change")
    done = hippo.ok("daily-runner")
    assert "  learn --git --days 1: 1 lesson learned\n" in done.stdout
    assert [r["content"] for r in _rows(db, "source = 'git-learn'")] == [
        "the scheduler skipped runs after a DST change"
    ]
