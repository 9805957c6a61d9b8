"""End-to-end: a project's committed `.hippo/` stays clean in git while its memories are only used.
Recalls, outcomes and a sleep that add no memory change no mirror; a change to a memory itself
still reaches its mirror (memory-model.md §2-§3)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from e2e.gitrepo import commit, make_repo

if TYPE_CHECKING:
    from e2e.harness import Hippo

MEMORIES = (
    "Deploys go through make release and never by hand",
    "The deploy script needs AWS_PROFILE set to the staging account",
    "Release tags are signed with the team key",
    "Database migrations run before the deploy starts",
    # A contradiction, so the store has an open conflict and its mirror.
    "The feature flag is enabled for production users",
    "The feature flag is disabled for production users",
)
USAGE_FIELDS = ("last_retrieved:", "retrieval_count:", "strength:", "half_life_days:", "outcome_")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout


def mirrors(repo: Path) -> list[Path]:
    return sorted(p for p in (repo / ".hippo").rglob("*.md") if "buffer" not in p.parts)


def test_recalls_outcomes_and_a_sleep_leave_committed_mirrors_unchanged(hippo: Hippo) -> None:
    repo = make_repo(Path(hippo.root, "shop"))
    commit(repo, "start the shop")
    cwd = str(repo)
    hippo.start()
    hippo.ok("init", "--no-schedule", "--no-learn", "--no-hooks", cwd=cwd)
    ids = [hippo.json("remember", text, cwd=cwd)["id"] for text in MEMORIES]
    hippo.ok("sleep", cwd=cwd)  # finds the conflict, which is then part of what is committed
    hippo.stop()  # every mirror written
    assert any(p.parent.name == "conflicts" for p in mirrors(repo))
    git(repo, "add", ".hippo")
    git(repo, "commit", "-q", "-m", "project memory")
    assert git(repo, "status", "--porcelain") == ""

    hippo.start()
    for query in ("deploy release", "feature flag production", "signed tags"):
        hippo.ok("recall", query, cwd=cwd)
        hippo.ok("outcome", "--good", cwd=cwd)
    hippo.ok("recall", "database migrations", cwd=cwd)
    hippo.ok("outcome", "--bad", cwd=cwd)
    hippo.ok("context", "deploy", cwd=cwd)
    hippo.ok("sleep", cwd=cwd)
    used = hippo.json("inspect", ids[0], cwd=cwd)["memory"]
    assert used["retrieval_count"] >= 1 and used["outcome_positive"] >= 1  # the use was recorded
    hippo.stop()  # whatever the session left pending is written now

    assert git(repo, "status", "--porcelain") == ""
    for path in mirrors(repo):
        text = path.read_text(encoding="utf-8")
        assert not [f for f in USAGE_FIELDS if f"\n{f}" in text], path

    # A change to the memory itself still reaches its mirror.
    hippo.start()
    new = hippo.json("supersede", ids[2], "Release tags are signed with the release key", cwd=cwd)["new"]
    hippo.stop()
    old = f" M .hippo/episodic/{ids[2]}.md"
    assert git(repo, "status", "--porcelain").splitlines() == [old, f"?? .hippo/episodic/{new}.md"]
    assert f"superseded_by: {new}\n" in (repo / old[3:]).read_text(encoding="utf-8")
