"""End-to-end: the entity graph (recall.md §11): `recall --hops`, its upkeep on writes, the migration
that builds it for a store written before it, and `GET /v1/graph`."""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

from e2e.http_support import serve
from hippod.store.sqlite.migrations_graph import m018_graph

if TYPE_CHECKING:
    from e2e.harness import Hippo

# The query's words are in TOP alone; NEAR shares TOP's code name, FAR shares NEAR's file path only.
TOP = "Nightly export job times out while PaymentGateway retries"
NEAR = "PaymentGateway keeps its retry budget in src/pay/limits.py"
FAR = "Raise the ceiling in src/pay/limits.py before the holiday season"
NOISE = "Staging deploys need the VPN up first"


def _remember(hippo: Hippo, text: str, *args: str) -> str:
    return str(hippo.json("remember", text, *args)["id"])


def _recall(hippo: Hippo, *args: str) -> dict[str, Any]:
    reply: dict[str, Any] = hippo.json("recall", "nightly export", *args)
    return reply


def _retrievals(hippo: Hippo, memory_id: str) -> int:
    return int(hippo.json("inspect", memory_id)["memory"]["retrieval_count"])


def test_hops_bring_what_shares_an_entity_with_the_top_hit(hippo: Hippo) -> None:
    hippo.start()
    top, near, far = (_remember(hippo, text) for text in (TOP, NEAR, FAR))
    _remember(hippo, NOISE)

    plain = _recall(hippo)
    assert [r["id"] for r in plain["results"]] == [top]
    assert plain["results"][0]["graph"] is None

    one = _recall(hippo, "--hops", "1")
    by_id = {r["id"]: r for r in one["results"]}
    assert set(by_id) == {top, near}
    score = by_id[top]["score"]
    assert by_id[near]["graph"] == {"hops": 1, "edge": "mentions", "via": "PaymentGateway", "origin": top}
    assert abs(by_id[near]["score"] - score * 0.5) < 1e-5

    text = hippo.ok("recall", "nightly export", "--hops", "1").stdout
    header = next(line for line in text.splitlines() if line.startswith(f"--- {near} "))
    assert header.endswith(f"[graph: 1hop mentions] score={by_id[near]['score']:.3f} strength=1.00")
    assert NEAR in text and FAR not in text

    two = {r["id"]: r for r in _recall(hippo, "--hops", "2")["results"]}
    assert set(two) == {top, near, far}
    assert two[far]["graph"]["hops"] == 2 and two[far]["graph"]["via"] == "src/pay/limits.py"
    assert abs(two[far]["score"] - score * 0.25) < 1e-5

    # Three recalls returned the top hit and strengthened it; the additions never were.
    assert _retrievals(hippo, top) == 4
    assert _retrievals(hippo, near) == 0
    assert _retrievals(hippo, far) == 0


def test_graph_additions_are_not_marked_by_outcome_nor_noted_under_a_goal(hippo: Hippo) -> None:
    hippo.start()
    top, near = _remember(hippo, TOP, "--tag", "pay"), _remember(hippo, NEAR, "--tag", "pay")
    hippo.ok("goal", "push", "pay")
    found = _recall(hippo, "--hops", "1")["results"]
    assert {r["id"]: r["graph"] is not None for r in found} == {top: False, near: True}

    # `outcome` marks the last batch: the top hit alone; a goal's pop hands its outcome to it alone.
    hippo.ok("outcome", "--good")
    popped = hippo.json("goal", "pop", "--outcome", "bad")
    assert (popped["goal"]["recalled"], popped["ids"]) == (1, [top])
    marks = {i: hippo.json("inspect", i)["memory"] for i in (top, near)}
    assert (marks[top]["outcome_positive"], marks[top]["outcome_negative"]) == (1, 1)
    assert (marks[near]["outcome_positive"], marks[near]["outcome_negative"]) == (0, 0)


def test_hops_out_of_range_is_a_usage_error(hippo: Hippo) -> None:
    hippo.start()
    _remember(hippo, TOP)
    for bad in ("4", "-1", "two"):
        done = hippo.ctl("recall", "nightly export", "--hops", bad)
        assert done.returncode == 2, done
        assert done.stderr.count("\n") == 1 and "--hops" in done.stderr
        assert "Traceback" not in done.stderr


def test_the_graph_follows_forget_and_supersede(hippo: Hippo) -> None:
    hippo.start()
    top, near = _remember(hippo, TOP), _remember(hippo, NEAR)
    names = {n["name"] for n in hippo.json("graph")["nodes"]}
    assert {"PaymentGateway", "src/pay/limits.py"} <= names

    hippo.ok("forget", near)
    assert "src/pay/limits.py" not in {n["name"] for n in hippo.json("graph")["nodes"]}
    assert [r["id"] for r in _recall(hippo, "--hops", "1")["results"]] == [top]

    near = _remember(hippo, NEAR)
    new = hippo.ok("supersede", near, "Card retries are capped by a CardRetryPolicy object now")
    replacement = new.stdout.split("with [")[1].split("]")[0]
    names = {n["name"] for n in hippo.json("graph")["nodes"]}
    assert "src/pay/limits.py" not in names and "CardRetryPolicy" in names
    assert [r["id"] for r in _recall(hippo, "--hops", "1")["results"]] == [top]
    # The superseded memory is one `supersedes` edge from its replacement, walked when it is admitted.
    found = hippo.json("recall", "CardRetryPolicy", "--hops", "1", "--include-superseded")["results"]
    steps = {r["id"]: r["graph"] for r in found}
    assert steps[replacement] is None
    assert steps[near] is not None and steps[near]["edge"] in ("supersedes", "mentions")


def test_decide_and_policy_become_entities_with_relations(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("decide", "Route card payments through PaymentGateway only")
    _remember(hippo, "Never log ANTHROPIC_API_KEY anywhere", "--tag", "policy")
    graph = hippo.json("graph")
    by_name = {n["name"]: n for n in graph["nodes"]}
    decision = by_name["Route card payments through PaymentGateway only"]
    policy = by_name["Never log ANTHROPIC_API_KEY anywhere"]
    assert (decision["type"], policy["type"]) == ("decision", "policy")
    edges = {(e["source"], e["target"], e["rel"]) for e in graph["edges"]}
    assert (decision["id"], by_name["PaymentGateway"]["id"], "references") in edges
    assert (policy["id"], by_name["ANTHROPIC_API_KEY"]["id"], "references") in edges


def test_the_graph_migration_builds_the_graph_of_a_store_written_before_it(hippo: Hippo) -> None:
    hippo.start()
    top, near = _remember(hippo, TOP), _remember(hippo, NEAR)
    hippo.stop()
    # The store as a hippod without the graph left it (no graph tables or triggers), then the graph's
    # migration run over it as an upgrade runs it: in one transaction of its own.
    with sqlite3.connect(hippo.db, isolation_level=None) as conn:
        for kind in ("trigger", "table"):
            names = conn.execute(
                "SELECT name FROM sqlite_master WHERE type = ? AND name LIKE 'graph%'", (kind,)
            ).fetchall()
            for (name,) in names:
                conn.execute(f"DROP {kind} {name}")
        conn.execute("BEGIN IMMEDIATE")
        m018_graph(conn)
        conn.execute("COMMIT")
    hippo.start()
    found = {r["id"]: r for r in _recall(hippo, "--hops", "1")["results"]}
    assert set(found) == {top, near}
    assert found[near]["graph"]["via"] == "PaymentGateway"
    with sqlite3.connect(hippo.db) as conn:
        mentions = conn.execute("SELECT count(*) FROM graph_mentions WHERE memory_id = ?", (near,))
        assert mentions.fetchone()[0] == 2  # PaymentGateway and src/pay/limits.py


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_http_graph_and_recall_hops(hippo: Hippo) -> None:
    url = serve(hippo)
    top, near = _remember(hippo, TOP), _remember(hippo, NEAR)
    status, model = _get(f"{url}/v1/graph")
    assert status == 200 and set(model) == {"nodes", "edges", "truncated"}
    names = {n["name"]: n for n in model["nodes"]}
    assert set(names["PaymentGateway"]) == {"id", "type", "name", "memories"}
    assert names["PaymentGateway"]["memories"] == 2 and names["PaymentGateway"]["type"] == "symbol"
    assert {"from", "to", "relType"} == set(model["edges"][0])

    status, focus = _get(f"{url}/v1/graph?entity=src/pay/limits.py")
    assert status == 200
    assert {n["name"] for n in focus["nodes"]} == {"src/pay/limits.py", "PaymentGateway"}
    assert _get(f"{url}/v1/graph?entity=nothing-named-so")[1] == {
        "nodes": [],
        "edges": [],
        "truncated": False,
    }
    assert _get(f"{url}/v1/graph?limit=1")[1]["truncated"] is True
    for bad in ("1.5", "0", "1001"):
        status, error = _get(f"{url}/v1/graph?limit={bad}")
        assert status == 400 and "limit" in json.dumps(error)
    assert _get(f"{url}/v1/graph?entity={'x' * 513}")[0] == 400

    status, found = _get(f"{url}/v1/memories?q=nightly+export&hops=1")
    assert status == 200
    assert {r["id"]: r["graph"] for r in found["results"]} == {
        top: None,
        near: {"hops": 1, "relType": "mentions"},
    }
    assert _get(f"{url}/v1/memories?q=nightly+export&hops=4")[0] == 400
