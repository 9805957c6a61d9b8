"""Real git repositories for tests: commits with chosen subjects and dates."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path


def _git(repo: Path, *args: str, date: str | None = None) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    if date is not None:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)


def make_repo(path: Path) -> Path:
    """`git init` with a local identity, so commits work on any machine."""
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q")
    _git(path, "config", "user.name", "Test Author")
    _git(path, "config", "user.email", "author@example.com")
    _git(path, "config", "commit.gpgsign", "false")
    return path


def commit(repo: Path, subject: str, *, days_ago: float = 0.1) -> None:
    """An empty commit with this subject, authored and committed `days_ago` days before now."""
    when = datetime.now(UTC) - timedelta(days=days_ago)
    _git(repo, "commit", "--allow-empty", "-q", "-m", subject, date=when.strftime("%Y-%m-%dT%H:%M:%S+0000"))
