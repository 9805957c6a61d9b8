"""What a team server serves: every verb and route it cannot serve (it needs a laptop's SQLite store)
answers the named error `not_on_team_store` (exit 1, HTTP 501), whichever door it comes through,
and `status`, `context` and `export` answer from the tenant's PostgreSQL rows.

The walks cover every request type of the protocol and every MCP tool, so a new verb cannot reach a
team server's handlers unless its body says a team server serves it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

import httpx
import msgspec
import pytest
from e2e.harness import Hippo
from hippo_memory import HippoError, HippoSync
from starlette.requests import Request

from hippoctl.protocol import messages as m
from hippod.mcp.args import TOOLS, parse
from hippod.web.app import OPS
from hippod.web.auth import Principal
from hippod.web.routing import Call, Op
from team.support import create_key, start_server

TENANT = "acme"
# The value a required field of each type gets in a walk: enough to reach the handler.
_VALUES: dict[Any, Any] = {str: "x", int: 1, float: 0.5, bool: False}
# Arguments a walk must get right to reach past the tool's own checks.
_TOOL_ARGUMENTS = {"hippo_card_move": {"action": "block", "reason": "waiting on review"}}
# Served, but not sent by the walk: it would stop the server.
_NOT_SENT = (m.Shutdown,)
# Verbs of a laptop's own store, as a person types them on a team server.
_REFUSED_VERBS = (
    ("decide", "we use postgres"),
    ("card", "list"),
    ("wm", "read"),
    ("snapshot", "show"),
    ("handoff", "latest"),
    ("tokens",),
    ("current", "show"),
    ("invalidate", "redis"),
    ("failures",),
    ("peers",),
    ("import", "--markdown", "notes.md"),
    ("capture", "--stdin"),
    ("team", "status"),
)


@pytest.fixture
def team_server(hippo: Hippo, pg_fresh_dsn: str) -> Iterator[tuple[Hippo, str]]:
    """A team server over a database of its own (the walk runs the daily run, which sleeps every
    tenant of its database), with HIPPO_TENANT set for its socket's clients: (instance, url)."""
    url = start_server(hippo, pg_fresh_dsn)
    hippo.env["HIPPO_TENANT"] = TENANT
    yield hippo, url


def _minimal(kind: type[msgspec.Struct], **given: Any) -> dict[str, Any]:
    """Values for a struct's required fields (by their names on the wire), as a walk sends them."""
    values = dict(given)
    for field in msgspec.structs.fields(kind):
        if field.required and field.name not in values:
            wanted = field.type
            if get_origin(wanted) is Annotated:  # a constrained type: its base
                wanted = get_args(wanted)[0]
            origin = get_origin(wanted)
            values[field.encode_name] = (
                [] if origin is list else {} if origin is dict else _VALUES.get(wanted)
            )
    return values


def _send(hippo: Hippo, body: m.Body) -> m.Result | m.Error:
    """One request on the team server's socket as the tenant; its final reply (progress skipped)."""
    with hippo.raw(timeout=120) as conn:
        assert isinstance(conn.hello(), m.Welcome)
        conn.send(m.Request(id=1, cwd=hippo.root, body=body, env={"HIPPO_TENANT": TENANT}))  # type: ignore[arg-type]
        while True:
            reply = conn.recv()
            if isinstance(reply, m.Result | m.Error):
                return reply
            assert isinstance(reply, m.Progress), reply


def test_every_request_type_is_served_or_named_on_a_team_server(team_server: tuple[Hippo, str]) -> None:
    hippo, _ = team_server
    kinds = [k for k in m.RequestBody.__args__ if k not in _NOT_SENT]
    assert len(kinds) > 90
    answers: dict[str, str] = {}
    for kind in kinds:
        body = msgspec.convert(_minimal(kind), kind)
        reply = _send(hippo, body)
        name = kind.__name__
        if body.team_refusal() is None:
            # Served: any answer but a failure of the server itself, or a refusal of the verb.
            assert not (isinstance(reply, m.Error) and reply.code == "internal"), (name, reply)
            assert not (isinstance(reply, m.Error) and reply.code == "not_on_team_store"), (name, reply)
        else:
            assert isinstance(reply, m.Error), (name, reply)
            assert (reply.code, reply.exit_code) == ("not_on_team_store", 1), (name, reply)
            assert reply.message.startswith("a team server does not serve "), reply.message
        answers[name] = reply.code if isinstance(reply, m.Error) else "ok"
    # The verbs of a laptop's sessions, decisions, cards and ledger are among those refused.
    for name in ("Decide", "CardList", "WmRead", "SnapshotShow", "Tokens", "TeamStatus", "Import", "Embed"):
        assert answers[name] == "not_on_team_store", name
    for name in ("Status", "Context", "Export", "Recall", "Remember", "Sleep", "Conflicts", "AuditList"):
        assert answers[name] != "not_on_team_store", name
    # The per-prompt hook's pinned block is a laptop's, though `context` itself is served.
    pinned = _send(hippo, m.Context(pinned_only=True))
    assert isinstance(pinned, m.Error) and pinned.code == "not_on_team_store", pinned


def test_every_mcp_tool_is_served_or_named_on_a_team_server(team_server: tuple[Hippo, str]) -> None:
    hippo, _ = team_server
    for tool, kind in TOOLS.items():
        arguments = _minimal(kind, **_TOOL_ARGUMENTS.get(tool, {}))
        refused = msgspec.convert(arguments, kind).team_refusal(tool)
        reply = _send(hippo, m.McpToolCall(tool=tool, arguments=arguments))
        if refused is None:
            assert not (isinstance(reply, m.Error) and reply.code == "internal"), (tool, reply)
            assert not (isinstance(reply, m.Error) and reply.code == "not_on_team_store"), (tool, reply)
        else:
            assert isinstance(reply, m.Error) and reply.code == "not_on_team_store", (tool, reply)
            assert tool in reply.message
    continuity = _send(
        hippo, m.McpToolCall(tool="hippo_recall", arguments={"query": "x", "include_continuity": True})
    )
    assert isinstance(continuity, m.Error) and continuity.code == "not_on_team_store", continuity


def test_the_cli_names_each_verb_a_team_server_does_not_serve(team_server: tuple[Hippo, str]) -> None:
    hippo, _ = team_server
    Path(hippo.root, "notes.md").write_text("# Notes\n\nUse the blue runner.\n")
    for verb in _REFUSED_VERBS:
        done = hippo.ctl(*verb, input="we chose postgres")
        assert done.returncode == 1, (verb, done)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, (verb, done.stderr)
        assert re.fullmatch(
            r"hippoctl: a team server does not serve [a-z ]+: it needs a laptop's own store", lines[0]
        ), lines
        assert done.stdout == ""


def test_every_http_route_a_team_server_does_not_serve_answers_501(team_server: tuple[Hippo, str]) -> None:
    hippo, url = team_server
    key = create_key(hippo, TENANT)
    with HippoSync(base_url=url, api_key=key) as sdk:
        calls = {
            "POST /v1/decisions": lambda: sdk.decide("We use PostgreSQL for the team tier"),
            "GET /v1/decisions": lambda: sdk.list_decisions(),
            "GET /v1/decisions/{n}": lambda: sdk.get_decision(1),
            "POST /v1/decisions/{n}/supersede": lambda: sdk.supersede_decision(1, "We use SQLite"),
            "POST /v1/decisions/{n}/close": lambda: sdk.close_decision(1),
            "GET /v1/sessions/{id}/assemble": lambda: sdk.assemble("s1"),
        }
        for route, call in calls.items():
            with pytest.raises(HippoError) as caught:
                call()
            assert caught.value.status_code == 501, route
            assert "a team server does not serve" in str(caught.value), route
    # The card routes (the SDK has no methods for them) and every other route: nothing answers 500,
    # and a route refused answers the named error in the API's one error shape.
    headers = {"Authorization": f"Bearer {key}"}
    refused = set()
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        for op in OPS:
            path, body = _route_request(op)
            answer = client.request(op.method, path, json=body)
            assert answer.status_code != 500, (op.method, op.path, answer.text)
            if answer.status_code == 501 and answer.json()["code"] == "not_on_team_store":
                assert set(answer.json()) == {"error", "code"}
                refused.add(f"{op.method} {op.path}")
    cards = {f"{op.method} {op.path}" for op in OPS if op.path.startswith("/v1/cards")}
    assert cards and cards <= refused
    assert {"GET /v1/context", "GET /v1/memories"}.isdisjoint(refused)
    # Exactly the routes whose request (or MCP tool) a team server does not serve are refused.
    assert refused == _routes_refused_by_body()


_PATH_VALUES = {"{n:int}": "1", "{id}": "mem_000000000000"}


def _route_request(op: Op) -> tuple[str, dict[str, Any] | None]:
    """The path and JSON body a walk sends to a route."""
    path = op.path
    for placeholder, value in _PATH_VALUES.items():
        path = path.replace(placeholder, value)
    return path, _minimal(op.body) if op.body is not None else None


class _Sent(Exception):
    """A route got as far as handing its request to the dispatcher."""


class _Capture(Call):
    """A route's call whose request is kept instead of run."""

    sent: m.RequestBody | None = None

    async def run(self, body: m.RequestBody) -> Any:
        self.sent = body
        raise _Sent


async def _body_of(op: Op) -> m.RequestBody | None:
    """The request the route's own code makes of what the walk sends it; None when it sends none."""
    path, body = _route_request(op)
    params = {}
    for piece, given in zip(op.path.split("/"), path.split("/"), strict=True):
        if piece.startswith("{"):
            params[piece.strip("{}").split(":")[0]] = int(given) if ":int" in piece else given
    raw = json.dumps(body).encode() if body is not None else b""

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": raw, "more_body": False}

    scope = {"type": "http", "method": op.method, "path": path, "query_string": b"", "headers": []}
    # No daemon and no dispatcher: _Capture keeps the request the route makes instead of running it.
    request = Request({**scope, "path_params": params}, receive)
    call = _Capture(request, None, None, Principal(TENANT, "admin"))  # type: ignore[arg-type]
    # _Sent, or the route answered before reaching the dispatcher.
    with contextlib.suppress(Exception):
        await op.run(call)
    return call.sent


def _routes_refused_by_body() -> set[str]:
    """The routes whose request a team server refuses by its body's `on_team` (or its MCP tool's)."""
    refused = set()
    for op in OPS:
        body = asyncio.run(_body_of(op))
        if body is None:
            continue
        if isinstance(body, m.McpToolCall):
            refusal = parse(body.tool, body.arguments).team_refusal(body.tool)
        else:
            refusal = body.team_refusal()
        if refusal is not None:
            refused.add(f"{op.method} {op.path}")
    return refused


def test_the_routes_refused_by_body_are_found() -> None:
    """The walk's expectation is made by the routes' own code: a route of a refused verb is in it,
    one of a served verb is not."""
    found = _routes_refused_by_body()
    assert {"POST /v1/decisions", "GET /v1/sessions/{id}/assemble", "POST /v1/cards"} <= found
    assert {"GET /v1/context", "POST /v1/memories", "GET /v1/recall/drill/{id}"}.isdisjoint(found)


def test_status_context_and_export_answer_from_the_team_rows(team_server: tuple[Hippo, str]) -> None:
    hippo, url = team_server
    key = create_key(hippo, TENANT)
    with HippoSync(base_url=url, api_key=key) as sdk:
        deploy = sdk.remember(content="The staging deploy needs the VPN up first", tags=["ops"])
        sdk.remember(content="Lunch is at noon on Fridays")
        context = sdk.get_context(q="staging deploy vpn")
        assert [e.entry.id for e in context.entries] == [deploy.id]
        assert context.tokens > 0
    status = hippo.json("status")
    [store] = status["stores"]
    assert (store["tenant"], store["total"], store["total_remembered"]) == (TENANT, 2, 2)
    assert store["mirrors"] is None
    said = hippo.ok("context", "staging deploy").stdout
    assert "The staging deploy needs the VPN up first" in said and "Lunch" not in said
    everything = hippo.ok("context").stdout
    assert "staging deploy" in everything and "Lunch is at noon" in everything
    exported = json.loads(hippo.ok("export").stdout)
    assert sorted(r["content"] for r in exported["memories"]) == [
        "Lunch is at noon on Fridays",
        "The staging deploy needs the VPN up first",
    ]
    # Another tenant's rows stay its own.
    hippo.env["HIPPO_TENANT"] = "beta"
    assert hippo.json("status")["stores"][0]["total"] == 0
    assert json.loads(hippo.ok("export").stdout)["memories"] == []
