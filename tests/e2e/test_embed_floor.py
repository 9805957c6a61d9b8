"""End-to-end: with the embed extra, a query unrelated to the store returns nothing and strengthens
nothing, over the CLI, `context` and MCP; a memory related by meaning alone still comes back when its
cosine reaches `embeddings.cosineFloor` (recall.md §10)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from e2e.mcp_support import call_ok, mcp_session

if TYPE_CHECKING:
    from e2e.harness import Hippo

# Every daemon here loads the real model.
pytestmark = pytest.mark.embeddings

DEPLOYS = [
    "Deploys to production go through the blue-green switch on Fridays only",
    "Roll back a bad deploy with kubectl rollout undo before paging anyone",
    "The CI pipeline builds the docker image and pushes it to the registry before each deploy",
    "Staging deploys need the VPN up first, or the helm upgrade hangs",
    "A deploy that changes the schema runs the migration job before the new pods start",
    "Canary deploys take 10% of traffic for 15 minutes before the full rollout",
    "Deploy keys for the monorepo are rotated every 90 days by the platform team",
    "Feature flags let us deploy dark and turn features on later",
    "The deploy bot posts each release tag in the #releases channel",
    "Terraform plans must be reviewed before the infrastructure deploy is applied",
    "Hotfix deploys skip the canary but still need two approvals",
    "After a deploy, watch the error rate dashboard for 30 minutes",
    "Blue-green deploys keep the old environment warm for one hour to allow a quick switch back",
    "The deploy freeze starts on December 20 and ends on January 3",
]
DISK = "production outage: disk space exhausted on the database host"
UNRELATED = ("zebra giraffe", "quantum chromodynamics")
FLOOR = 0.40


def _store(hippo: Hippo, texts: list[str], config: dict[str, object] | None = None) -> tuple[str, str]:
    """A project store holding `texts`, every one embedded; returns (folder, database path)."""
    project = os.path.join(hippo.root, "deploys")
    os.makedirs(os.path.join(project, ".hippo"))
    if config is not None:
        Path(project, ".hippo", "config.json").write_text(json.dumps(config))
    hippo.ok("init", cwd=project)
    for text in texts:
        hippo.ok("remember", text, cwd=project)
    hippo.ok("embed", cwd=project)
    done = hippo.ok("embed", "--status", cwd=project).stdout
    assert f"{len(texts)} of {len(texts)} memories embedded" in done, done
    return project, os.path.join(project, ".hippo", "hippo.db")


def _rows(db: str) -> dict[str, tuple[object, ...]]:
    """What a recall or an outcome may change, per memory."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT id, half_life_days, retrieval_count, last_retrieved, outcome_positive, outcome_negative "
            "FROM memories"
        )
        return {row[0]: tuple(row[1:]) for row in rows}


def test_an_unrelated_query_returns_and_strengthens_nothing(hippo: Hippo) -> None:
    hippo.start()
    project, db = _store(hippo, DEPLOYS)
    before = _rows(db)
    assert len(before) == len(DEPLOYS)

    for query in UNRELATED:
        data = hippo.json("recall", query, cwd=project)
        assert data["results"] == [], [r["content"] for r in data["results"]]
        done = hippo.ok("recall", query, cwd=project)
        assert done.stdout.strip() == f'No memories found for: "{query}"'
        # --min-results overrides the budget for matches, never adds a memory that does not match.
        assert hippo.json("recall", query, "--min-results", "5", cwd=project)["results"] == []
        # A substring of a stored word (the LIKE fallback) is no term match either.
        assert hippo.json("recall", "ploy", cwd=project)["results"] == []
        context = hippo.json("context", query, "--format", "json", cwd=project)
        assert context["memories"] == []
    assert _rows(db) == before

    # A recall that matches still strengthens what it returns.
    data = hippo.json("recall", "canary traffic", cwd=project)
    assert data["results"] and data["results"][0]["content"].startswith("Canary deploys")
    after = _rows(db)
    assert after[data["results"][0]["id"]][1] == 1


def test_a_memory_related_by_meaning_alone_is_still_returned(hippo: Hippo) -> None:
    hippo.start()
    project, db = _store(hippo, [*DEPLOYS, DISK])
    before = _rows(db)

    # No word of the query is in any memory: only a cosine at or above the floor brings one back.
    data = hippo.json("recall", "storage ran out", "--why", cwd=project)
    assert data["results"], data
    assert data["results"][0]["content"] == DISK
    for result in data["results"]:
        assert result["why"]["matched"] == [] and result["why"]["cosine"] >= FLOOR, result
    returned = {r["id"] for r in data["results"]}
    after = _rows(db)
    for memory_id, row in after.items():
        assert row[1] == before[memory_id][1] + (1 if memory_id in returned else 0), memory_id


def test_the_floor_is_a_setting(hippo: Hippo) -> None:
    hippo.start()
    project, _ = _store(hippo, DEPLOYS, {"embeddings": {"cosineFloor": 0.0}})
    # With no floor every memory of positive cosine comes back, as recall.md §10.4 has it.
    data = hippo.json("recall", "zebra giraffe", "--why", cwd=project)
    assert data["results"]
    assert all(0 < r["why"]["cosine"] < FLOOR for r in data["results"])


async def test_mcp_recall_then_outcome_marks_nothing_for_an_unrelated_query(hippo: Hippo) -> None:
    hippo.start()
    project, db = _store(hippo, DEPLOYS)
    before = _rows(db)
    async with mcp_session(hippo, cwd=project) as session:
        found = await call_ok(session, "hippo_recall", {"query": "zebra giraffe"})
        assert found.strip() == 'No memories found for: "zebra giraffe"'
        result = await session.call_tool("hippo_outcome", {"good": True})
        assert result.is_error, result.content
        text = result.content[0].text  # type: ignore[union-attr]
        assert "returned nothing" in text, text
    assert _rows(db) == before

    # The same session after a recall that matches: only what it returned is marked.
    async with mcp_session(hippo, cwd=project) as session:
        await call_ok(session, "hippo_recall", {"query": "canary traffic", "limit": 1})
        await call_ok(session, "hippo_outcome", {"good": True})
    marked = [mid for mid, row in _rows(db).items() if row[3] == 1]
    assert len(marked) == 1
