"""End-to-end: the goal stack tells apart three clusters of memories that BM25 alone cannot (the
original hippo's "3 of 3 queries"): the same query, asked in three sessions each with its own goal,
returns each goal's cluster on top."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from e2e.harness import Hippo

NOW = "2026-09-30T17:40:02.000Z"
FIXTURE = Path(__file__).parent.parent / "fixtures" / "goal_clusters.json"


def _top(hippo: Hippo, proj: str, query: str, k: int, session: str, *extra: str) -> list[str]:
    done = hippo.ctl(
        "--json",
        "recall",
        query,
        "--limit",
        str(k),
        *extra,
        cwd=proj,
        env=hippo.daemon_env(HIPPO_SESSION_ID=session),
    )
    assert done.returncode == 0, done.stderr
    return [r["content"] for r in json.loads(done.stdout)["results"]]


def _passes(top: list[str], marker: str, markers: list[str]) -> bool:
    """The original's check: the goal's marker in the top k, no other cluster's."""
    others = [x for x in markers if x != marker]
    return any(marker in t for t in top) and not any(o in t for t in top for o in others)


def test_three_clusters_bm25_cannot_tell_apart_and_the_goal_does(hippo: Hippo) -> None:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    hippo.start(fake_now=NOW)
    proj = os.path.join(hippo.root, "proj")
    os.makedirs(proj)
    hippo.ok("init", cwd=proj)
    for memory in data["memories"]:
        flags = [w for tag in memory["tags"] for w in ("--tag", tag)]
        hippo.ok("remember", memory["text"], *flags, cwd=proj)
    query, k, goals = data["query"], data["top_k"], data["goals"]
    markers = list(goals.values())

    # BM25 alone: one ranking for the one query, so at most one of the three goals can pass.
    plain = _top(hippo, proj, query, k, "s-none")
    assert len(plain) == k
    without = sum(_passes(plain, marker, markers) for marker in goals.values())
    assert without < 3, plain

    with_goal = 0
    for goal, marker in goals.items():
        session = f"s-{goal}"
        pushed = hippo.ctl(
            "goal", "push", goal, "--session", cwd=proj, env=hippo.daemon_env(HIPPO_SESSION_ID=session)
        )
        assert pushed.returncode == 0, pushed.stderr
        top = _top(hippo, proj, query, k, session)
        assert marker in top[0], (goal, top)
        with_goal += _passes(top, marker, markers)
        # --goal alone (x1.5) does the same for this query, in a session without goals.
        assert marker in _top(hippo, proj, query, 1, "s-none", "--goal", goal)[0]
    assert with_goal == 3
