"""End-to-end: `context` always tells the agent something (recall.md §9). `--auto` in a tree with
uncommitted changes gives the strongest memories when the query it derives finds none, and a query
that finds nothing says so, as recall does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from e2e.gitrepo import commit, make_repo

if TYPE_CHECKING:
    from e2e.harness import Hippo

DEPLOY = "Deploys go through make release and never by hand"
TAGS = "Release tags are signed with the team key"


def _shop(hippo: Hippo) -> Path:
    """A git repository with a store holding two memories, and an app.py committed."""
    repo = make_repo(Path(hippo.root, "shop"))
    (repo / "app.py").write_text("print('shop')\n")
    subprocess.run(["git", "-C", str(repo), "add", "app.py"], check=True, capture_output=True)
    commit(repo, "start the shop")
    hippo.start()
    hippo.ok("init", "--no-schedule", "--no-learn", "--no-hooks", cwd=str(repo))
    for text in (DEPLOY, TAGS):
        hippo.ok("remember", text, cwd=str(repo))
    return repo


def test_auto_in_a_dirty_tree_gives_the_strongest_memories_when_its_query_finds_none(hippo: Hippo) -> None:
    repo = _shop(hippo)
    (repo / "app.py").write_text("print('shop, changed')\n")  # ` M app.py`: the derived query is `app`
    text = hippo.ok("context", "--auto", "--budget", "1500", cwd=str(repo)).stdout
    assert text.startswith("## Project Memory (2 entries, ")
    assert DEPLOY in text and TAGS in text
    data = json.loads(hippo.ok("context", "--auto", "--format", "json", cwd=str(repo)).stdout)
    assert (data["mode"], data["query"], len(data["memories"])) == ("all", None, 2)

    # A derived query that finds something still narrows the block to what it found.
    (repo / "deploy.py").write_text("TARGET = 'prod'\n")
    subprocess.run(["git", "-C", str(repo), "add", "deploy.py"], check=True, capture_output=True)
    data = json.loads(hippo.ok("context", "--auto", "--format", "json", cwd=str(repo)).stdout)
    assert (data["mode"], data["query"]) == ("query", "app deploy")
    assert [m["content"] for m in data["memories"]] == [DEPLOY]


def test_a_query_that_finds_nothing_says_so_as_recall_does(hippo: Hippo) -> None:
    repo = _shop(hippo)
    recall = hippo.ok("recall", "package manager", cwd=str(repo))
    context = hippo.ok("context", "package manager", cwd=str(repo))
    assert context.stdout == recall.stdout == 'No memories found for: "package manager"\n'
    assert context.stderr == ""
    # The JSON forms answer with an empty list, as recall's does.
    assert json.loads(hippo.ok("--json", "recall", "package manager", cwd=str(repo)).stdout)["results"] == []
    data = json.loads(hippo.ok("context", "package manager", "--format", "json", cwd=str(repo)).stdout)
    assert (data["mode"], data["query"], data["memories"]) == ("query", "package manager", [])
    data = json.loads(hippo.ok("--json", "context", "package manager", cwd=str(repo)).stdout)
    assert data["memories"] == []
    # The per-prompt hook's format stays silent: its host takes only its JSON or nothing.
    hook = hippo.ok("context", "package manager", "--format", "additional-context", cwd=str(repo))
    assert hook.stdout == ""

    # With nothing stored at all (here or in the global store), `*` mode says so too.
    empty = Path(hippo.root, "empty")
    empty.mkdir()
    hippo.ok("init", "--no-schedule", "--no-learn", "--no-hooks", cwd=str(empty))
    assert hippo.ok("context", cwd=str(empty)).stdout == "No memories found\n"
