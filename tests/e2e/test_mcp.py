"""`hippoctl mcp` (integrations.md §11) through the SDK's own stdio client and by hand: initialize,
the 19 tools and their schemas, tool calls against a real daemon, errors, and a clean stdout."""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING

import pytest
from mcp.shared.exceptions import MCPError

from e2e.mcp_support import RawMcp, call_error, call_ok, mcp_session
from e2e.sleep_support import make, plant, project, query
from hippod.mcp.args import TOOLS as DAEMON_TOOLS

if TYPE_CHECKING:
    from e2e.harness import Hippo

# What the daemon takes arguments for (hippod/mcp/args.py): the client must list the same 19 tools.
TOOLS = set(DAEMON_TOOLS)
# tool -> (required inputs, {input: default}) as integrations.md §11 lists them
SCHEMAS: dict[str, tuple[set[str], dict[str, object]]] = {
    "hippo_recall": ({"query"}, {"budget": 4000, "include_continuity": False}),
    "hippo_assemble": ({"session_id"}, {"budget": 4000, "fresh_tail_count": 10, "summarize_older": True}),
    "hippo_drill": ({"summary_id"}, {"limit": 50}),
    "hippo_remember": ({"text"}, {"error": False, "pin": False, "global": False}),
    "hippo_outcome": ({"good"}, {"ids": None}),
    "hippo_context": (set(), {"budget": 1500, "pinned_only": False}),
    "hippo_status": (set(), {}),
    "hippo_learn": (set(), {"days": 7}),
    "hippo_conflicts": (set(), {"status": "open"}),
    "hippo_resolve": ({"conflict_id", "keep"}, {"forget": False, "reject_loser": False}),
    "hippo_share": ({"id"}, {"force": False}),
    "hippo_peers": (set(), {}),
    "hippo_predict_baserate": ({"class_tag"}, {}),
    "hippo_card_list": (set(), {"status": None}),
    "hippo_card_show": ({"card_id"}, {}),
    "hippo_card_create": ({"title"}, {"repo": None, "depends_on": None}),
    "hippo_card_claim": ({"card_id", "runtime"}, {}),
    "hippo_card_move": ({"card_id", "action"}, {"run": None, "reason": None, "outcome": None}),
    "hippo_card_comment": ({"card_id", "body"}, {}),
}


async def test_initialize_and_list_the_19_tools(hippo: Hippo) -> None:
    hippo.start()
    async with mcp_session(hippo) as session:
        init = session.initialize_result
        assert init is not None and init.server_info.name == "hippod"
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(listed) == TOOLS and len(listed) == 19
    # `hippoctl --help` counts the tools the server lists.
    [line] = [line for line in hippo.ok("--help").stdout.splitlines() if line.split()[:1] == ["mcp"]]
    assert line.endswith(f"MCP server over stdio ({len(listed)} tools)"), line
    for name, (required, defaults) in SCHEMAS.items():
        schema = listed[name].input_schema
        assert set(schema.get("required", [])) == required, name
        for field, default in defaults.items():
            assert schema["properties"][field]["default"] == default, (name, field)
        assert listed[name].description, name
    conflict_id = listed["hippo_resolve"].input_schema["properties"]["conflict_id"]
    assert conflict_id["type"] == "integer"
    depth = listed["hippo_drill"].input_schema["properties"]["depth"]
    assert (depth["minimum"], depth["maximum"]) == (1, 10)


async def test_remember_recall_outcome_over_one_session(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    async with mcp_session(hippo, cwd=folder) as session:
        stored = await call_ok(
            session,
            "hippo_remember",
            {"text": "The staging deploy needs the VPN to be up first", "tag": "deploy"},
        )
        assert stored.startswith("Remembered [mem_")
        memory_id = stored.split("[", 1)[1].split("]", 1)[0]
        found = await call_ok(session, "hippo_recall", {"query": "staging deploy VPN"})
        assert "The staging deploy needs the VPN to be up first" in found
        assert memory_id in found
        # No ids: the batch this MCP session's recall returned.
        marked = await call_ok(session, "hippo_outcome", {"good": True})
        assert marked == "Applied positive outcome to 1 memory"
        status = await call_ok(session, "hippo_status")
        assert folder in status
    [(positive, tags)] = query(db, "SELECT outcome_positive, tags FROM memories WHERE id = ?", (memory_id,))
    assert positive == 1 and json.loads(tags)[0] == "deploy"
    keys = [row[0] for row in query(db, "SELECT key FROM meta WHERE key LIKE 'last_batch:%'")]
    assert len(keys) == 1 and keys[0].startswith("last_batch:default:mcp:"), keys
    actors = query(db, "SELECT DISTINCT actor FROM audit_log WHERE op IN ('remember', 'recall', 'outcome')")
    assert actors == [("mcp",)]


async def test_recall_and_context_go_on_the_ledger_as_mcp(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    hippo.ok("remember", "Run the migrations before the seed script", cwd=folder)
    async with mcp_session(hippo, cwd=folder) as session:
        found = await call_ok(session, "hippo_recall", {"query": "migrations seed"})
        block = await call_ok(session, "hippo_context", {"query": "migrations"})
        assert "Run the migrations before the seed script" in block
        assert await call_ok(session, "hippo_context", {"budget": 0}) == ""

    def rows() -> list[tuple[object, ...]]:
        return query(hippo.db, "SELECT surface, tokens, items FROM token_ledger ORDER BY id")

    assert hippo.wait_for(lambda: len(rows()) >= 2, 10), rows()
    assert rows() == [("mcp", -(-len(found) // 4), 1), ("mcp", -(-len(block) // 4), 1)]


async def test_global_remember_and_outcome_by_ids(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    async with mcp_session(hippo, cwd=folder) as session:
        # "true" passes the SDK's (lax) check as True, and True is what reaches the daemon.
        first = await call_ok(
            session, "hippo_remember", {"text": "Prefer ripgrep over grep here", "global": "true"}
        )
        second = await call_ok(session, "hippo_remember", {"text": "Local builds use make -j4", "pin": True})
        ids = [text.split("[", 1)[1].split("]", 1)[0] for text in (first, second)]
        marked = await call_ok(session, "hippo_outcome", {"good": False, "ids": ids})
        assert marked.startswith("Applied negative outcome to 2 memories")
        # An unknown id marks nothing at all.
        missing = await call_error(
            session, "hippo_outcome", {"good": False, "ids": [ids[0], "mem_000000000000"]}
        )
        assert "no memory with id mem_000000000000" in missing
    assert query(hippo.db, "SELECT outcome_negative FROM memories WHERE id = ?", (ids[0],)) == [(1,)]
    assert query(db, "SELECT outcome_negative, pinned FROM memories WHERE id = ?", (ids[1],)) == [(1, 1)]


async def test_errors_set_is_error(hippo: Hippo) -> None:
    hippo.start()
    async with mcp_session(hippo) as session:
        short = await call_error(session, "hippo_remember", {"text": "ab"})
        assert "at least 3 characters" in short
        unknown = await call_error(session, "hippo_no_such_tool")
        assert "hippo_no_such_tool" in unknown
        typed = await call_error(session, "hippo_recall", {"query": "x", "budget": "lots"})
        assert "budget" in typed
        extra = await call_error(session, "hippo_recall", {"query": "deploy", "colour": "red"})
        assert "hippo_recall: unknown argument `colour`" in extra
        missing = await call_error(session, "hippo_drill", {})
        assert "summary_id" in missing
        none_yet = await call_error(session, "hippo_outcome", {"good": True})
        assert "no recent recall to mark in this MCP session" in none_yet
        # The session is still usable after errors.
        assert "Remembered [" in await call_ok(session, "hippo_remember", {"text": "still serving"})


async def test_daemon_unreachable_is_json_rpc_error_32000(hippo: Hippo) -> None:
    env = dict(hippo.env, HIPPO_NO_SPAWN="1")
    async with mcp_session(hippo, env=env) as session:
        with pytest.raises(MCPError) as caught:
            await session.call_tool("hippo_status", {})
        assert caught.value.code == -32000
        assert "hippod is unreachable" in caught.value.error.message
        # tools/list needs no daemon.
        assert len((await session.list_tools()).tools) == len(TOOLS)
    assert hippo.answers() is None


async def test_spawns_the_daemon_on_first_call(hippo: Hippo) -> None:
    async with mcp_session(hippo) as session:
        assert "Remembered [" in await call_ok(session, "hippo_remember", {"text": "spawned on demand"})
    assert hippo.answers() is not None
    # No project store above the cwd: the global store, created on first call.
    assert query(hippo.db, "SELECT content FROM memories") == [("spawned on demand",)]


def test_stdout_carries_only_protocol_with_stdin_held_open(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    with RawMcp(hippo, folder) as raw:
        assert raw.handshake()["serverInfo"]["name"] == "hippod"
        raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert len(raw.reply()["result"]["tools"]) == len(TOOLS)
        for n, text in enumerate(["first lesson over raw stdio", "second lesson over raw stdio"], 3):
            raw.send(
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {"name": "hippo_remember", "arguments": {"text": text}},
                }
            )
            answer = raw.reply()
            assert answer["id"] == n and answer["result"]["isError"] is False
            assert answer["result"]["content"][0]["text"].startswith("Remembered [")
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "hippo_recall", "arguments": {"query": "lesson raw stdio"}},
            }
        )
        found = raw.reply()["result"]["content"][0]["text"]
        assert "first lesson over raw stdio" in found and "second lesson over raw stdio" in found
        assert raw.close() == 0
        assert "Traceback" not in raw.stderr()
    for line in raw.lines:
        assert json.loads(line)["jsonrpc"] == "2.0", line
    assert len(raw.lines) == 5


async def test_assemble_a_session(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    for n in range(1, 6):
        content = f"step {n} done\nwith detail line {n}"
        hippo.ok("session", "log", "--id", "s1", "--type", "progress", "--content", content, cwd=folder)
    hippo.ok(
        "handoff", "create", "--session", "s1", "--summary", "Ranking ported", "--next", "Tune", cwd=folder
    )
    hippo.ok("session", "log", "--id", "other", "--content", "not this session", cwd=folder)
    async with mcp_session(hippo, cwd=folder) as session:
        text = await call_ok(session, "hippo_assemble", {"session_id": "s1", "fresh_tail_count": 2})
        short = await call_ok(session, "hippo_assemble", {"session_id": "s1", "budget": 60})
        nothing = await call_ok(session, "hippo_assemble", {"session_id": "nobody"})
    lines = text.splitlines()
    assert lines[0] == "## Session s1 (6 of 6 items)"
    assert lines[1:5] == [f"- [progress] step {n} done" for n in range(1, 5)]
    assert lines[5].startswith("- [progress] 20") and lines[5].endswith("step 5 done with detail line 5")
    assert lines[6].startswith("## Handoff #1 (session s1, ")
    assert lines[7:] == ["Summary: Ranking ported", "Next: Tune"]
    assert "not this session" not in text
    assert len(short) <= 60 * 4 and "older items left out to fit the budget" in short
    assert "Ranking ported" in short
    assert nothing == "No continuity recorded for session nobody."


async def _plant(db: str, rows: list[tuple[str, str, str, str, str | None, list[str]]]) -> None:
    """Rows (id, layer, content, tags json, trace_outcome, parents) written with hippod's store code
    (in a thread: the store code runs its own event loop)."""
    await asyncio.to_thread(
        plant,
        db,
        [
            make(content, id=mid, layer=layer, tags=json.loads(tags), trace_outcome=outcome, parents=parents)
            for mid, layer, content, tags, outcome, parents in rows
        ],
    )


async def test_drill_follows_parents(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    hippo.stop()
    await _plant(
        db,
        [
            (
                "sem_aaaaaaaaaaaa",
                "semantic",
                "Deploys fail without the VPN\nmerged",
                "[]",
                None,
                ["mem_a1", "mem_a2", "mem_gone"],
            ),
            ("mem_a1", "episodic", "Deploy failed: VPN down", "[]", None, ["mem_b1"]),
            ("mem_a2", "episodic", "Deploy failed again, VPN", "[]", None, []),
            ("mem_b1", "episodic", "an older source", "[]", None, []),
        ],
    )
    hippo.start()
    async with mcp_session(hippo, cwd=folder) as session:
        one = await call_ok(session, "hippo_drill", {"summary_id": "sem_aaaaaaaaaaaa"})
        two = await call_ok(
            session, "hippo_drill", {"summary_id": "sem_aaaaaaaaaaaa", "depth": 2, "limit": 2}
        )
        plain = await call_error(session, "hippo_drill", {"summary_id": "mem_a2"})
        deep = await call_error(session, "hippo_drill", {"summary_id": "sem_aaaaaaaaaaaa", "depth": 11})
    assert one.splitlines() == [
        "## sem_aaaaaaaaaaaa merges 3 memories: Deploys fail without the VPN",
        "- mem_a1 Deploy failed: VPN down",
        "- mem_a2 Deploy failed again, VPN",
        "- mem_gone (no longer stored)",
    ]
    assert two.splitlines()[1:] == [
        "- mem_a1 Deploy failed: VPN down",
        "  - mem_b1 an older source",
        "(2 more parents not shown: past the limit or the budget)",
    ]
    assert "mem_a2 is not a merged memory" in plain
    assert "depth" in deep

    def rows() -> list[tuple[object, ...]]:
        return query(hippo.db, "SELECT surface, tokens, items FROM token_ledger ORDER BY id")

    assert hippo.wait_for(lambda: len(rows()) == 2, 10), rows()
    assert rows() == [("mcp", -(-len(one) // 4), 3), ("mcp", -(-len(two) // 4), 2)]


async def test_predict_baserate(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    hippo.stop()
    outcomes = ["success", "success", "failure", "partial", None]
    rows = [
        (f"mem_t{n}", "trace", f"Session s{n} ended: migrate", '["migration"]', outcome, [])
        for n, outcome in enumerate(outcomes)
    ]
    rows.append(("mem_x1", "trace", "Session x ended: other", '["other"]', "failure", []))
    rows.append(("mem_x2", "episodic", "not a trace", '["migration"]', "failure", []))
    await _plant(db, rows)
    hippo.start()
    async with mcp_session(hippo, cwd=folder) as session:
        text = await call_ok(session, "hippo_predict_baserate", {"class_tag": "migration"})
        none = await call_ok(session, "hippo_predict_baserate", {"class_tag": "unheard-of"})
    assert text.splitlines() == [
        'Base rate for "migration" from 5 traces:',
        "  success      2   40.0%",
        "  failure      1   20.0%",
        "  partial      1   20.0%",
        "  unknown      1   20.0%",
    ]
    assert none == 'No trace memories carry the tag "unheard-of", so there is no base rate yet.'


async def test_pinned_only_context_is_sent_every_call(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    hippo.ok("remember", "--pin", "Never push to main directly", cwd=folder)
    async with mcp_session(hippo, cwd=folder) as session:
        first = await call_ok(session, "hippo_context", {"pinned_only": True})
        again = await call_ok(session, "hippo_context", {"pinned_only": True})
    assert "Never push to main directly" in first
    assert again == first
    rows = lambda: query(hippo.db, "SELECT surface, skipped FROM token_ledger")  # noqa: E731
    assert hippo.wait_for(lambda: len(rows()) == 2, 10), rows()
    assert rows() == [("mcp", 0), ("mcp", 0)]


def test_raw_daemon_request_checks_tool_and_arguments(hippo: Hippo) -> None:
    from hippoctl.protocol import messages as m

    hippo.start()
    for tool, arguments, expected in [
        ("hippo_nope", {}, "unknown tool 'hippo_nope'; the tools are hippo_recall, hippo_assemble, "),
        ("hippo_recall", {"query": 3}, "hippo_recall: query: expected `str`, got `int`"),
        ("hippo_assemble", {"session_id": "s", "budget": -1}, "hippo_assemble: budget must be 0 or more"),
        ("hippo_resolve", {"conflict_id": 1}, "hippo_resolve: missing required argument `keep`"),
    ]:
        with hippo.raw() as conn:
            assert isinstance(conn.hello(), m.Welcome)
            body = m.McpToolCall(tool=tool, arguments=arguments, session_key="mcp:1")
            conn.send(m.Request(id=1, cwd=hippo.root, body=body))
            reply = conn.recv()
        assert isinstance(reply, m.Error) and reply.code == "usage", reply
        assert reply.message.startswith(expected), reply.message
    assert not os.path.exists(os.path.join(hippo.root, ".hippo"))
