"""A project stays clean in git: after `init` and everyday use, `git status` lists the files meant to
be committed (the markdown mirrors, config.json, .hippo/.gitignore) and none of the machine-local
ones (the database and its -wal/-shm, stats.json, the session buffer, backups, temporary files)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from e2e.gitrepo import commit, make_repo

if TYPE_CHECKING:
    from e2e.harness import Hippo

COMMITTABLE = re.compile(
    r"\.hippo/(?:\.gitignore|config\.json|(?:episodic|semantic|trace|dormant)/[\w-]+\.md"
    r"|conflicts/conflict_\d+\.md)"
)
AGENT_FILES = ("CLAUDE.md", "AGENTS.md")
MACHINE_LOCAL = ("hippo.db", "hippo.db-wal", "hippo.db-shm", "stats.json", "buffer/active-task.md")


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    command = ["git", "-C", str(repo), *args]
    return subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout


def _untracked(repo: Path) -> list[str]:
    """`git status --porcelain --untracked-files=all`: the paths it lists."""
    return [line[3:] for line in _git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()]


def _use(hippo: Hippo, folder: str) -> None:
    """A day of work: memories, a recall, a snapshot and session events, a sleep that merges."""
    for text in (
        "Deploy to staging failed because the migration step was skipped",
        "Deploy to staging failed because the migration step was skipped again",
        "The feature flag is enabled for production users",
        "The feature flag is disabled for production users",
    ):
        hippo.ok("remember", text, cwd=folder)
    hippo.ok("recall", "deploy staging", cwd=folder)
    hippo.ok("snapshot", "save", "--task", "Port ranking", "--summary", "BM25 passes", cwd=folder)
    hippo.ok("session", "log", "--id", "s1", "--content", "tie-break fixed", "--type", "progress", cwd=folder)
    hippo.ok("sleep", "--no-share", cwd=folder)


def test_after_init_and_use_git_status_lists_only_committable_files(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    repo = make_repo(tmp_path / "webapp")
    for name in ("README.md", *AGENT_FILES):
        (repo / name).write_text(f"# {name}\n\nThe API lives in api/.\n")
    _git(repo, "add", "README.md", *AGENT_FILES)
    commit(repo, "docs: readme and agent notes")
    hippo.ok("init", "--no-schedule", cwd=str(repo))
    _use(hippo, str(repo))
    # Mirrors are written after the reply, memories first and the conflict files after them.
    assert hippo.wait_for(
        lambda: all(any(f".hippo/{d}/" in p for p in _untracked(repo)) for d in ("semantic", "conflicts")), 10
    )

    listed = _untracked(repo)
    assert ".hippo/.gitignore" in listed
    assert any(p.startswith(".hippo/episodic/") for p in listed)
    assert any(p.startswith(".hippo/conflicts/") for p in listed)
    # init wrote its block into the user's agent files, and its backups of them under the store.
    assert sorted(p for p in listed if p in AGENT_FILES) == sorted(AGENT_FILES)
    assert [p for p in listed if p not in AGENT_FILES and not COMMITTABLE.fullmatch(p)] == []
    assert list(repo.glob("*.hippo-bak")) == []
    store = repo / ".hippo"
    for name in (*MACHINE_LOCAL, *(f"backups/{n}" for n in AGENT_FILES)):
        assert (store / name).exists(), name
    ignored = _git(repo, "check-ignore", *(f".hippo/{n}" for n in MACHINE_LOCAL), ".hippo/backups/CLAUDE.md")
    assert len(ignored.splitlines()) == len(MACHINE_LOCAL) + 1

    # Committed once, the repository stays clean through more work but for the mirrors it changes.
    _git(repo, "add", "-A")
    commit(repo, "chore: hippo store")
    hippo.ok("remember", "Use ruff format before committing Python changes", cwd=str(repo))
    hippo.ok("recall", "ruff", cwd=str(repo))
    assert hippo.wait_for(lambda: _untracked(repo) != [], 10)
    assert [p for p in _untracked(repo) if not COMMITTABLE.fullmatch(p)] == []


def test_a_store_made_before_the_gitignore_gets_one_and_an_edited_one_is_kept(
    hippo: Hippo, tmp_path: Path
) -> None:
    hippo.start()
    old = make_repo(tmp_path / "old")
    hippo.ok("init", "--no-hooks", "--no-schedule", "--no-learn", cwd=str(old))
    ignore = old / ".hippo" / ".gitignore"
    ignore.unlink()
    hippo.stop()
    # As an earlier hippod left it: no .gitignore and no note of having written one.
    with sqlite3.connect(old / ".hippo" / "hippo.db") as conn:
        conn.execute("DELETE FROM meta WHERE key = 'gitignore_written'")
    conn.close()
    hippo.start()
    hippo.ok("remember", "The cache layer is enabled in staging", cwd=str(old))
    assert "hippo.db-*" in ignore.read_text(encoding="utf-8").splitlines()

    edited = "# mine\nhippo.db\n"
    ignore.write_text(edited, encoding="utf-8")
    hippo.stop()
    hippo.start()
    hippo.ok("remember", "The cache layer is disabled in staging", cwd=str(old))
    hippo.ok("init", "--no-hooks", "--no-schedule", "--no-learn", cwd=str(old))
    assert ignore.read_text(encoding="utf-8") == edited


def test_a_removed_gitignore_stays_removed_until_init(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    repo = make_repo(tmp_path / "repo")
    hippo.ok("init", "--no-hooks", "--no-schedule", "--no-learn", cwd=str(repo))
    ignore = repo / ".hippo" / ".gitignore"
    ignore.unlink()
    hippo.stop()
    hippo.start()
    hippo.ok("remember", "Deploys need the VPN on", cwd=str(repo))
    assert not ignore.exists()  # the user took it away: a store being opened does not put it back
    done = hippo.json("init", "--no-hooks", "--no-schedule", "--no-learn", cwd=str(repo))
    assert ignore.exists()
    assert json.dumps(done)  # init still answers as before
