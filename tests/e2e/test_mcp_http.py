"""MCP over HTTP (`POST /mcp`, integrations.md §9, §11) through the SDK's own streamable-HTTP client
against a real daemon with its listener open: the same 19 tools and schemas as `hippoctl mcp`, tool
calls in the key's tenant, keys checked as on every route, refusals as MCP errors."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from e2e.http_support import create_key, serve
from e2e.mcp_support import call_error, call_ok, mcp_session

if TYPE_CHECKING:
    from e2e.harness import Hippo

ID = re.compile(r"\b(?:epi|sem|mem)_[A-Za-z0-9_]+")


@asynccontextmanager
async def http_session(url: str, key: str | None) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session on `<url>/mcp`, sending `key` as a Bearer token."""
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as client,
        streamable_http_client(f"{url}/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def _tools(listed: Any) -> dict[str, Any]:
    return {tool.name: (tool.description, tool.input_schema) for tool in listed.tools}


async def test_the_same_19_tools_and_schemas_as_stdio(hippo: Hippo) -> None:
    url = serve(hippo)
    key = create_key(hippo)
    async with http_session(url, key) as session:
        init = session.initialize_result
        assert init is not None and init.server_info.name == "hippod"
        over_http = _tools(await session.list_tools())
    async with mcp_session(hippo) as stdio:
        over_stdio = _tools(await stdio.list_tools())
    assert len(over_http) == 19
    assert over_http == over_stdio


async def test_remember_recall_outcome_in_the_keys_tenant(hippo: Hippo) -> None:
    url = serve(hippo)
    key_a, key_b = create_key(hippo, tenant="a"), create_key(hippo, tenant="b")
    async with http_session(url, key_a) as a:
        made = await call_ok(a, "hippo_remember", {"text": "Tenant A pins numpy below 2 for the solver"})
        [memory_id] = ID.findall(made)
        recalled = await call_ok(a, "hippo_recall", {"query": "numpy solver"})
        assert memory_id in recalled and "numpy below 2" in recalled
        marked = await call_ok(a, "hippo_outcome", {"good": True})
        assert memory_id in marked or "1" in marked
    async with http_session(url, key_b) as b:
        assert "numpy below 2" not in await call_ok(b, "hippo_recall", {"query": "numpy solver"})
        # Another tenant's id is unknown to B, as on the REST routes.
        assert f"no memory with id {memory_id}" in await call_error(
            b, "hippo_outcome", {"good": False, "ids": [memory_id]}
        )
    with httpx.Client(base_url=url) as raw:
        one = raw.get(f"/v1/memories/{memory_id}", headers={"Authorization": f"Bearer {key_a}"}).json()
    assert one["tenantId"] == "a"
    assert one["outcomePositive"] == 1
    # The audit log names the key that wrote it over MCP.
    with sqlite3.connect(hippo.db) as conn:
        actors = {
            row[0] for row in conn.execute("SELECT actor FROM audit_log WHERE target_id = ?", (memory_id,))
        }
    assert actors and all(actor == f"mcp:api_key:{key_a.split('.')[0]}" for actor in actors), actors


async def test_a_missing_or_wrong_key_is_refused_401(hippo: Hippo) -> None:
    url = serve(hippo, "--allow-remote", "--host", "127.0.0.1")
    key = create_key(hippo)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(base_url=url) as raw:
        for auth in (
            None,
            "Bearer hk_aaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
            "Basic eDp5",
        ):
            sent = dict(headers, **({"Authorization": auth} if auth else {}))
            answer = raw.post("/mcp", content=json.dumps(message), headers=sent)
            assert answer.status_code == 401, (auth, answer.text)
            assert answer.headers["www-authenticate"] == "Bearer"
            assert "error" in answer.json()
        revoked = key.split(".")[0]
        hippo.ok("auth", "revoke", revoked)
        answer = raw.post(
            "/mcp", content=json.dumps(message), headers=dict(headers, Authorization=f"Bearer {key}")
        )
        assert answer.status_code == 401 and "revoked" in answer.json()["error"]
    # The SDK's client sees the refusal too, and nothing was served.
    wrong = "hk_aaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    with pytest.raises(BaseException) as refused:
        async with http_session(url, wrong):
            pass
    # The SDK's client turns an HTTP error status into an MCP error before initialize completes.
    assert [type(leaf) for leaf in _leaves(refused.value)] == [MCPError], repr(refused.value)


def _leaves(exc: BaseException) -> list[BaseException]:
    """The errors inside the SDK's task groups' exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


async def test_a_bad_tool_call_is_an_mcp_error_not_a_500(hippo: Hippo) -> None:
    url = serve(hippo)
    key = create_key(hippo)
    async with http_session(url, key) as session:
        # Arguments the schema refuses, an unknown id, an unknown tool: each a tool error.
        assert "query" in await call_error(session, "hippo_recall", {"budget": 5})
        assert "budget" in await call_error(session, "hippo_recall", {"query": "x", "budget": -1})
        assert "no memory with id epi_nope" in await call_error(
            session, "hippo_outcome", {"good": True, "ids": ["epi_nope"]}
        )
        assert "hippo_nope" in await call_error(session, "hippo_nope", {})
        # The session still serves after them.
        assert "memories" in (await call_ok(session, "hippo_status")).lower()
    with httpx.Client(base_url=url) as raw:
        headers = {
            "Authorization": f"Bearer {key}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        broken = raw.post("/mcp", content=b'{"jsonrpc": "2.0", "id": 1, "method"', headers=headers)
        assert broken.status_code == 400 and broken.json()["error"]["code"] == -32700
        unknown = raw.post(
            "/mcp", content=json.dumps({"jsonrpc": "2.0", "id": 2, "method": "nope/nope"}), headers=headers
        )
        assert unknown.status_code == 200 and unknown.json()["error"]["code"] == -32601
    with open(hippo.log, encoding="utf-8") as log:
        assert "Traceback" not in log.read()
