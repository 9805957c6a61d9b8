"""End-to-end: the goal stack through the real daemon: goal push, pop and list, recall's goal factor
(`--goal` x1.5; the stack's x2.0, +0.5 per further goal, at most x3.0) and a pop's outcome handed
to the memories recalled under the goal."""

from __future__ import annotations

import json
import os
import sqlite3
from typing import TYPE_CHECKING, Any

from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo

NOW = "2026-09-30T17:40:02.000Z"


def _project(hippo: Hippo) -> str:
    folder = os.path.join(hippo.root, "proj")
    os.makedirs(folder, exist_ok=True)
    hippo.ok("init", cwd=folder)
    return folder


def _ctl(hippo: Hippo, cwd: str, *args: str, session: str | None = None) -> Any:
    return hippo.ctl(*args, cwd=cwd, env=hippo.daemon_env(HIPPO_SESSION_ID=session))


def _json(hippo: Hippo, cwd: str, *args: str, session: str | None = None) -> Any:
    done = _ctl(hippo, cwd, "--json", *args, session=session)
    assert done.returncode == 0, (args, done.stderr)
    return json.loads(done.stdout)


def _remember(hippo: Hippo, cwd: str, text: str, *tags: str) -> str:
    flags = [word for tag in tags for word in ("--tag", tag)]
    return str(hippo.json("remember", text, *flags, cwd=cwd)["id"])


def _rows(proj: str, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(os.path.join(proj, ".hippo", "hippo.db")) as conn:
        return list(conn.execute(sql))


def _goal_factors(reply: dict[str, Any]) -> dict[str, float]:
    """Each result's content -> its goal factor, as --json --why reports it."""
    return {r["content"]: r["why"]["multipliers"].get("goal") for r in reply["results"]}


def test_push_pop_and_list_per_store_and_session(hippo: Hippo) -> None:
    hippo.start(fake_now=NOW)
    proj = _project(hippo)
    assert hippo.ok("goal", "list", cwd=proj).stdout == "No goals on the stack.\n"

    assert _ctl(hippo, proj, "goal", "push", "db-rewrite").stdout == (
        "Pushed goal db-rewrite (#1) on the store's stack\n"
    )
    done = _ctl(hippo, proj, "goal", "push", "ui-polish", "--session", session="s1")
    assert (done.returncode, done.stdout) == (0, "Pushed goal ui-polish (#2) on the session's stack\n")

    # Session s1 sees the store's stack and its own; s2 and no session see the store's alone.
    seen = _json(hippo, proj, "goal", "list", session="s1")
    assert seen["session"] == "s1"
    assert [
        (g["id"], g["tag"], g["stack"], g["session"], g["status"], g["lifting"]) for g in seen["goals"]
    ] == [
        (1, "db-rewrite", "store", None, "active", True),
        (2, "ui-polish", "session", "s1", "active", True),
    ]
    assert [g["tag"] for g in _json(hippo, proj, "goal", "list", session="s2")["goals"]] == ["db-rewrite"]
    assert [g["tag"] for g in hippo.json("goal", "list", cwd=proj)["goals"]] == ["db-rewrite"]
    text = _ctl(hippo, proj, "goal", "list", session="s1").stdout
    assert text.splitlines() == [
        "#2  ui-polish  [session s1] [lifting]  recalled under it: 0",
        "#1  db-rewrite  [store] [lifting]  recalled under it: 0",
    ]
    # The same tag twice on one stack is refused; on the other stack it is a goal of its own.
    again = _ctl(hippo, proj, "goal", "push", "db-rewrite")
    assert (again.returncode, again.stderr) == (
        1,
        "hippoctl: goal db-rewrite is already on the store's stack (try: hippoctl goal list)\n",
    )

    # pop takes the newest goal the session sees; --session only the session's own.
    assert _ctl(hippo, proj, "goal", "pop", "--session", session="s2").returncode == 1
    done = _ctl(hippo, proj, "goal", "pop", session="s1")
    assert done.stdout == "Popped goal ui-polish (#2); 0 memories recalled under it\n"
    done = _ctl(hippo, proj, "goal", "pop", session="s1")
    assert done.stdout == "Popped goal db-rewrite (#1); 0 memories recalled under it\n"
    everything = _json(hippo, proj, "goal", "list", "--all", session="s1")["goals"]
    assert [(g["tag"], g["status"]) for g in everything] == [
        ("db-rewrite", "popped"),
        ("ui-polish", "popped"),
    ]
    assert all(g["popped_at"] == NOW for g in everything)

    # Popping an empty stack: one line, exit 1, nothing changed.
    before = _rows(proj, "SELECT * FROM goals ORDER BY id")
    empty = _ctl(hippo, proj, "goal", "pop", session="s1")
    assert (empty.returncode, empty.stdout) == (1, "")
    assert (
        empty.stderr == "hippoctl: the goal stack is empty: nothing to pop (try: hippoctl goal push <tag>)\n"
    )
    assert _rows(proj, "SELECT * FROM goals ORDER BY id") == before


def test_bad_input_is_one_line_and_writes_nothing(hippo: Hippo) -> None:
    hippo.start()
    proj = _project(hippo)
    cases = [
        (["goal", "push"], "goal push needs a tag"),
        (["goal", "push", "  "], "the goal tag is empty"),
        (["goal", "push", "x" * 65], "the goal tag is 65 characters long; the limit is 64"),
        (["goal", "push", "a\x1bb"], "the goal tag holds a control character"),
        (["goal", "push", "db", "--session"], "goal push --session needs a session: set HIPPO_SESSION_ID"),
        (["goal", "pop", "--session"], "goal pop --session needs a session: set HIPPO_SESSION_ID"),
        (["goal", "pop", "db"], "a goal tag does not go with `goal pop`"),
        (["goal", "list", "--outcome", "good"], "--outcome does not go with `goal list`"),
        (["goal", "push", "db", "--all"], "--all does not go with `goal push`"),
        (["goal", "pop", "--outcome", "great"], "--outcome 'great' is not one of good, bad"),
        (["recall", "deploy", "--goal", " "], "--goal: the goal tag is empty"),
    ]
    for args, message in cases:
        done = _ctl(hippo, proj, *args)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", f"hippoctl: error: {message}\n"), args
    # The daemon refuses the same when a request skips the client's checks.
    for body in (m.GoalPush(tag=" "), m.GoalPop(outcome="great"), m.Recall(query="deploy", goal="")):
        with hippo.raw() as conn:
            assert isinstance(conn.hello(), m.Welcome)
            conn.send(m.Request(id=3, cwd=proj, body=body))
            reply = conn.recv()
        assert isinstance(reply, m.Error) and (reply.code, reply.exit_code) == ("usage", 2), (body, reply)
    with hippo.raw() as conn:
        assert isinstance(conn.hello(), m.Welcome)
        conn.send(m.Request(id=4, cwd=proj, body=m.GoalPush(tag="db", session=True)))
        reply = conn.recv()
    assert (
        isinstance(reply, m.Error)
        and reply.message == "goal push --session needs a session: set HIPPO_SESSION_ID"
    )
    assert _rows(proj, "SELECT COUNT(*) FROM goals") == [(0,)]


def test_the_goal_factor_in_the_score_and_why(hippo: Hippo) -> None:
    hippo.start(fake_now=NOW)
    proj = _project(hippo)
    texts = {
        "none": "rollout checklist for the cache layer",
        "a": "rollout checklist for the queue layer",
        "goal:b": "rollout checklist for the index layer",
        "a+b": "rollout checklist for the auth layer",
        "a+b+c+d": "rollout checklist for the search layer",
        "w": "rollout checklist for the billing layer",
    }
    tags = {
        "none": [],
        "a": ["a"],
        "goal:b": ["goal:b"],
        "a+b": ["a", "goal:b"],
        "a+b+c+d": ["a", "b", "c", "d"],
    }
    for key, text in texts.items():
        _remember(hippo, proj, text, *tags.get(key, ["w"]))
    query = ["recall", "rollout checklist", "--why"]

    # No goal: --why has no goal factor.
    plain = _json(hippo, proj, *query)
    assert all("goal" not in r["why"]["multipliers"] for r in plain["results"])

    # The store's stack w (bottom, waiting), a, b, c; the session's d. The top 3 of each stack lift.
    for tag in ("w", "a", "b", "c"):
        assert _ctl(hippo, proj, "goal", "push", tag).returncode == 0
    assert _ctl(hippo, proj, "goal", "push", "d", "--session", session="s1").returncode == 0
    states = {g["tag"]: g["lifting"] for g in _json(hippo, proj, "goal", "list", session="s1")["goals"]}
    assert states == {"w": False, "a": True, "b": True, "c": True, "d": True}

    lifted = _json(hippo, proj, *query, session="s1")
    assert _goal_factors(lifted) == {
        texts["none"]: 1.0,
        texts["w"]: 1.0,  # its goal waits under three others
        texts["a"]: 2.0,
        texts["goal:b"]: 2.0,
        texts["a+b"]: 2.5,
        texts["a+b+c+d"]: 3.0,  # 2.0 + 3 x 0.5, capped
    }
    # The factor is part of the score: the ranking follows it, and the score is the product.
    assert [r["content"] for r in lifted["results"][:2]] == [texts["a+b+c+d"], texts["a+b"]]
    for r in lifted["results"]:
        product = r["why"]["base"]
        for value in r["why"]["multipliers"].values():
            product *= value
        assert abs(product - r["score"]) < 1e-4, r
    # Without the session, d does not lift: a+b+c+d matches a, b and c alone (3.0 still), a+b 2.5.
    store_only = _goal_factors(_json(hippo, proj, *query))
    assert (store_only[texts["a+b+c+d"]], store_only[texts["a+b"]]) == (3.0, 2.5)

    # --goal stands alone: x1.5 for its tag (bare or goal:), the stack does not lift.
    explicit = _json(hippo, proj, *query, "--goal", "b", session="s1")
    assert _goal_factors(explicit) == {
        texts["none"]: 1.0,
        texts["w"]: 1.0,
        texts["a"]: 1.0,
        texts["goal:b"]: 1.5,
        texts["a+b"]: 1.5,
        texts["a+b+c+d"]: 1.5,
    }
    # The text --why names the factor on the multipliers line.
    shown = _ctl(hippo, proj, *query, "--goal", "b", "--limit", "1", session="s1").stdout
    line = next(x for x in shown.splitlines() if x.startswith("    multipliers:"))
    assert " goal 1.5 " in line or line.endswith(" goal 1.5"), line


def test_a_pop_hands_its_outcome_to_what_was_recalled_under_it(hippo: Hippo) -> None:
    hippo.start(fake_now=NOW)
    proj = _project(hippo)
    under = _remember(hippo, proj, "the migration runner needs a lock file", "db")
    also = _remember(hippo, proj, "the migration runner retries twice", "goal:db")
    other = _remember(hippo, proj, "the migration runner logs to stderr")
    later = _remember(hippo, proj, "the deploy script tags the release", "db")

    # Recalled under --goal: not noted under the stack's goal (the stack did not lift that recall).
    assert _ctl(hippo, proj, "goal", "push", "db", "--session", session="s1").returncode == 0
    _json(hippo, proj, "recall", "migration runner", "--goal", "db", session="s1")
    assert _rows(proj, "SELECT COUNT(*) FROM goal_recalls") == [(0,)]
    # Another session's recall does not see s1's goal.
    _json(hippo, proj, "recall", "migration runner", session="s2")
    assert _rows(proj, "SELECT COUNT(*) FROM goal_recalls") == [(0,)]

    found = _json(hippo, proj, "recall", "migration runner", session="s1")
    assert {r["id"] for r in found["results"]} == {under, also, other}
    assert sorted(r[0] for r in _rows(proj, "SELECT memory_id FROM goal_recalls")) == sorted([under, also])
    assert _json(hippo, proj, "goal", "list", session="s1")["goals"][0]["recalled"] == 2

    # A recall after the pop is under no goal; `later` was never recalled under it.
    popped = _json(hippo, proj, "goal", "pop", "--outcome", "good", session="s1")
    assert (popped["outcome"], popped["applied"], sorted(popped["ids"])) == ("good", 2, sorted([under, also]))
    assert (popped["goal"]["tag"], popped["goal"]["status"], popped["goal"]["recalled"]) == (
        "db",
        "popped",
        2,
    )
    marks = dict(
        (r[0], r[1:]) for r in _rows(proj, "SELECT id, outcome_positive, outcome_negative FROM memories")
    )
    assert marks == {under: (1, 0), also: (1, 0), other: (0, 0), later: (0, 0)}
    assert _rows(proj, "SELECT COUNT(*) FROM goal_recalls") == [(0,)]
    # Audited as `outcome` marks, as the outcome verb's are.
    audited = _rows(proj, "SELECT target_id FROM audit_log WHERE op = 'outcome'")
    assert sorted(r[0] for r in audited) == sorted([under, also])

    # A bad outcome through the store's stack, with the text reply; a pop without one marks nothing.
    assert _ctl(hippo, proj, "goal", "push", "db").returncode == 0
    _json(hippo, proj, "recall", "lock file")
    done = _ctl(hippo, proj, "goal", "pop", "--outcome", "bad")
    assert (
        done.stdout
        == "Popped goal db (#2); 1 memory recalled under it; applied negative outcome to 1 memory\n"
    )
    assert _rows(proj, f"SELECT outcome_positive, outcome_negative FROM memories WHERE id = '{under}'") == [
        (1, 1)
    ]
    assert _ctl(hippo, proj, "goal", "push", "db").returncode == 0
    _json(hippo, proj, "recall", "release")
    assert _ctl(hippo, proj, "goal", "pop").stdout == "Popped goal db (#3); 1 memory recalled under it\n"
    assert _rows(proj, f"SELECT outcome_positive, outcome_negative FROM memories WHERE id = '{later}'") == [
        (0, 0)
    ]
