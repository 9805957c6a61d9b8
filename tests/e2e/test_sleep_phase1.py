"""Sleep phase 1 (sleep.md §2): learn from the last day of git and import the store's agent notes."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from e2e.gitrepo import commit, make_repo
from e2e.harness import Hippo

NOTE = "---\nname: build\ndescription: how the build runs\ntype: project\n---\n\n" + (
    "The build needs Node 20 and pnpm 9\n"
)


def _project(hippo: Hippo) -> Path:
    # No watcher: whatever arrives here arrives through the sleep.
    Path(hippo.home).mkdir(parents=True, exist_ok=True)
    Path(hippo.home, "daemon.json").write_text(json.dumps({"watch": {"enabled": False}}), encoding="utf-8")
    project = make_repo(Path(hippo.root, "proj"))
    commit(project, "fix: the parser choked on tabs", days_ago=3)
    commit(project, "fix: the cache key ignored the locale", days_ago=0.1)
    hippo.start()
    # --no-learn: init would learn the same commits, and this test is about what the sleep learns.
    hippo.ok("init", "--no-learn", cwd=str(project))
    encoded = re.sub(r"[^A-Za-z0-9]", "-", os.path.realpath(project))
    note = Path(hippo.user_home, ".claude", "projects", encoded, "memory", "build.md")
    note.parent.mkdir(parents=True)
    note.write_text(NOTE, encoding="utf-8")
    return project


def _contents(hippo: Hippo, project: Path) -> list[str]:
    return sorted(r["content"] for r in hippo.json("recall", "*", cwd=str(project))["results"])


def test_sleep_learns_the_last_day_of_git_and_imports_agent_notes(hippo: Hippo) -> None:
    project = _project(hippo)
    done = hippo.ok("sleep", "--verbose", cwd=str(project))
    assert "Learned 1 lesson from git; imported 1 agent note" in done.stdout
    found = hippo.json("recall", "cache key locale build Node pnpm", cwd=str(project))["results"]
    assert sorted(r["content"] for r in found) == [
        "The build needs Node 20 and pnpm 9",
        "the cache key ignored the locale",
    ]
    assert not hippo.json("recall", "parser tabs", cwd=str(project))["results"]  # 3 days old


def test_no_learn_skips_phase_one(hippo: Hippo) -> None:
    project = _project(hippo)
    done = hippo.ok("sleep", "--no-learn", "--verbose", cwd=str(project))
    assert "Learned 0 lessons from git; imported 0 agent notes" in done.stdout
    assert not hippo.json("recall", "cache key locale build Node pnpm", cwd=str(project))["results"]


def test_the_requests_tool_choice_applies(hippo: Hippo) -> None:
    project = _project(hippo)
    env = {**hippo.env, "HIPPO_AGENT_MEMORY_TOOLS": "codex"}
    done = hippo.ctl("sleep", "--verbose", cwd=str(project), env=env)
    assert done.returncode == 0, done.stderr
    assert "Learned 1 lesson from git; imported 0 agent notes" in done.stdout
