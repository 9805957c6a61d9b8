"""Goal stack bench: the three-cluster queries with and without goals, and recall's time with and
without an active goal.

A measuring tool, not a test: it prints tables and asserts nothing about time.

- Clusters: the 18 memories of tests/fixtures/goal_clusters.json (three clusters, database, frontend
  and deploy, all holding the query's words "rewrite step"; the original hippo's dlpfc-depth
  fixture) in a fresh global store. The query is asked once with no goal, then once per cluster
  with that cluster's goal on the store's stack (pushed before, popped after), then with
  `recall --goal <tag>` and no stack. A query passes as the original counts it: its cluster's
  marker in the top 3 and no other cluster's; top-1 counts the first result alone.
- Latency: the same store with --memories corpus memories more (bench/corpus.py; every tenth
  tagged for one of the three goals), recall through the socket --runs times for each of --queries
  corpus queries, the three ways in turn each run: no goal, three goals on the stack, `--goal`.
  p50 and p99 in ms.

Usage: python bench/goals.py [--memories 5000] [--queries 20] [--runs 25]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import Any

from corpus import make_corpus, make_memories, make_queries
from harness import BenchError, Sandbox, call, kill_all_daemons, log, make_sandbox, pct, start_daemon

from hippoctl.protocol import messages as m

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "goal_clusters.json"


def _ok(sb: Sandbox, body: m.Body) -> Any:
    reply = call(sb.sock, sb.home, sb.base, body)
    if isinstance(reply, m.Error):
        raise BenchError(f"{type(body).__name__}: {reply.message}")
    return reply.data


def _top(sb: Sandbox, query: str, k: int, goal: str | None = None) -> list[str]:
    data = _ok(sb, m.Recall(query=query, limit=k, goal=goal))
    return [r["content"] for r in data["results"]]


def _passes(top: list[str], marker: str, markers: list[str]) -> bool:
    others = [x for x in markers if x != marker]
    return any(marker in t for t in top) and not any(o in t for t in top for o in others)


def clusters(sb: Sandbox, data: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(how, queries passing, top-1 right) for no goal, the stack, and --goal."""
    query, k, goals = data["query"], data["top_k"], data["goals"]
    markers = list(goals.values())
    plain = _top(sb, query, k)
    rows = [
        (
            "BM25 alone (no goal)",
            sum(_passes(plain, mk, markers) for mk in markers),
            sum(mk in plain[0] for mk in markers),
        )
    ]
    stack = [0, 0]
    explicit = [0, 0]
    for goal, marker in goals.items():
        _ok(sb, m.GoalPush(tag=goal))
        top = _top(sb, query, k)
        _ok(sb, m.GoalPop())
        stack[0] += _passes(top, marker, markers)
        stack[1] += marker in top[0]
        top = _top(sb, query, k, goal=goal)
        explicit[0] += _passes(top, marker, markers)
        explicit[1] += marker in top[0]
    rows.append(("goal on the stack (x2.0)", stack[0], stack[1]))
    rows.append(("recall --goal (x1.5)", explicit[0], explicit[1]))
    return rows


def _times(sb: Sandbox, queries: list[str], goal: str | None = None) -> list[float]:
    took = []
    for query in queries:
        started = time.perf_counter()
        _ok(sb, m.Recall(query=query, budget=4000, goal=goal))
        took.append((time.perf_counter() - started) * 1000)
    return took


def latency(sb: Sandbox, data: dict[str, Any], args: argparse.Namespace) -> list[tuple[str, list[float]]]:
    """The three ways in turn, run after run, so that a machine busy for a while slows them alike."""
    goals = list(data["goals"])
    corpus = make_corpus()
    log(f"remembering {args.memories} corpus memories")
    for i, (text, tags) in enumerate(make_memories(corpus, args.memories, seed=37)):
        extra = [goals[i % 3]] if i % 10 == 0 else []
        _ok(sb, m.Remember(content=text, tags=[*tags, *extra]))
    queries = make_queries(corpus, args.queries)
    _times(sb, queries)  # warm: the store open, its pages cached
    plain: list[float] = []
    stacked: list[float] = []
    explicit: list[float] = []
    for _ in range(args.runs):
        plain += _times(sb, queries)
        for goal in goals:
            _ok(sb, m.GoalPush(tag=goal))
        stacked += _times(sb, queries)
        for _ in goals:
            _ok(sb, m.GoalPop())
        explicit += _times(sb, queries, goal=goals[0])
    return [("no goal", plain), ("3 goals on the stack", stacked), ("recall --goal", explicit)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--runs", type=int, default=25)
    args = parser.parse_args()
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    sb = make_sandbox(len(data["memories"]))
    start_daemon(sb)
    try:
        for memory in data["memories"]:
            _ok(sb, m.Remember(content=memory["text"], tags=memory["tags"]))
        found = clusters(sb, data)
        timed = latency(sb, data, args)
    finally:
        kill_all_daemons()
        shutil.rmtree(sb.base, ignore_errors=True)
    n = len(data["goals"])
    print(f'Three clusters, query "{data["query"]}", one query per goal ({n}):\n')
    print("| ranking | queries passing (top 3 all of the goal's cluster) | top-1 of the goal's cluster |")
    print("|---|---:|---:|")
    for how, passing, first in found:
        print(f"| {how} | {passing} of {n} | {first} of {n} |")
    count, size = args.queries * args.runs, args.memories + len(data["memories"])
    print(f"\nRecall through the socket, {size} memories, {count} recalls each:\n")
    print("| recall | p50 (ms) | p99 (ms) |")
    print("|---|---:|---:|")
    for how, took in timed:
        print(f"| {how} | {pct(took, 50):.2f} | {pct(took, 99):.2f} |")


if __name__ == "__main__":
    main()
