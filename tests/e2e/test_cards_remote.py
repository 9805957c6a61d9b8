"""The work-queue cards over HTTP (`/v1/cards...`) and MCP (`hippo_card_*`): the same verbs as the
CLI, in each transport's shapes, with a tenant's cards invisible to another tenant's key."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

from e2e.http_support import create_key, serve
from e2e.mcp_support import call_error, call_ok, mcp_session
from e2e.sleep_support import project, query

if TYPE_CHECKING:
    from e2e.harness import Hippo


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, (response.status_code, response.text)
    return response.json()


def _refused(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert body["code"] == code, body
    return str(body["error"])


def test_cards_over_http_from_create_to_done(hippo: Hippo) -> None:
    url = serve(hippo)
    # As the SDK sends every call (a POST without a key must say it carries JSON).
    with httpx.Client(base_url=url, headers={"Content-Type": "application/json"}) as client:
        first = _ok(client.post("/v1/cards", json={"title": "Add retries", "contract": "tests pass"}), 201)
        assert first["card"]["status"] == "ready" and first["card"]["tenantId"] == "default"
        second = _ok(client.post("/v1/cards", json={"title": "Ship it", "dependsOn": [1]}), 201)
        assert second["card"]["status"] == "waiting"
        claimed = _ok(client.post("/v1/cards/1/claim", json={"runtime": "codex"}))
        assert claimed["run"]["run"] == 1 and claimed["run"]["leaseExpiresAt"]
        assert "card #1 is running" in _refused(
            client.post("/v1/cards/1/claim", json={"runtime": "other"}), 409, "bad_state"
        )
        assert "not its live run" in _refused(
            client.post("/v1/cards/1/heartbeat", json={"run": 2}), 409, "run_mismatch"
        )
        _ok(client.post("/v1/cards/1/heartbeat", json={"run": 1}))
        _ok(client.post("/v1/cards/1/comments", json={"body": "halfway"}), 201)
        _ok(client.post("/v1/cards/1/review", json={"run": 1}))
        done = _ok(client.post("/v1/cards/1/complete", json={"outcome": "success", "run": 1}))
        assert done["card"]["status"] == "done" and done["readied"] == [2]
        shown = _ok(client.get("/v1/cards/1"))
        assert shown["dependents"] == [2] and shown["runs"][0]["endReason"] == "review"
        assert [c["body"] for c in shown["comments"]] == ["halfway"]
        listed = _ok(client.get("/v1/cards", params={"status": "ready"}))
        assert [c["id"] for c in listed["cards"]] == [2]
        assert _ok(client.post("/v1/cards/reclaim"))["reclaimed"] == []
        _refused(client.get("/v1/cards", params={"status": "sideways"}), 400, "bad_request")
        _refused(client.post("/v1/cards", json={"title": ""}), 400, "bad_request")
        _refused(client.post("/v1/cards/1/complete", json={"outcome": "meh"}), 400, "usage")
        _refused(client.get("/v1/cards/99"), 404, "not_found")


def test_another_tenants_key_sees_and_moves_none_of_the_cards(hippo: Hippo) -> None:
    url = serve(hippo)
    key_a = create_key(hippo, tenant="team-a")
    key_b = create_key(hippo, tenant="team-b")
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key_a}"}) as a:
        _ok(a.post("/v1/cards", json={"title": "Team A's secret plan"}), 201)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key_b}"}) as b:
        assert _ok(b.get("/v1/cards"))["cards"] == []
        for method, path, body in (
            ("GET", "/v1/cards/1", None),
            ("POST", "/v1/cards/1/claim", {"runtime": "thief"}),
            ("POST", "/v1/cards/1/comments", {"body": "mine now"}),
        ):
            _refused(b.request(method, path, json=body), 404, "not_found")
        # A dependency on team A's card is as unknown as a missing one.
        assert "unknown dependency" in _refused(
            b.post("/v1/cards", json={"title": "B's", "dependsOn": [1]}), 400, "usage"
        )
    assert query(hippo.db, "SELECT tenant_id, status FROM cards") == [("team-a", "ready")]
    assert query(hippo.db, "SELECT COUNT(*) FROM card_comments") == [(0,)]


async def test_cards_over_mcp(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    async with mcp_session(hippo, cwd=folder) as session:
        made = await call_ok(session, "hippo_card_create", {"title": "Fix the flaky upload test"})
        assert made == "Card #1 created: ready"
        await call_ok(session, "hippo_card_create", {"title": "Release", "depends_on": [1]})
        claimed = await call_ok(session, "hippo_card_claim", {"card_id": 1, "runtime": "claude-code"})
        assert claimed.startswith("Claimed card #1: run 1, lease until ")
        assert "not its live run" in await call_error(
            session, "hippo_card_move", {"card_id": 1, "action": "heartbeat", "run": 4}
        )
        assert "block needs a reason" in await call_error(
            session, "hippo_card_move", {"card_id": 1, "action": "block"}
        )
        await call_ok(session, "hippo_card_move", {"card_id": 1, "action": "review", "run": 1})
        done = await call_ok(
            session, "hippo_card_move", {"card_id": 1, "action": "complete", "outcome": "success"}
        )
        assert done == "Card #1 is done (success); now ready: #2"
        await call_ok(session, "hippo_card_comment", {"card_id": 2, "body": "go when ready"})
        listed = await call_ok(session, "hippo_card_list", {"status": "ready"})
        assert listed == "#2 [ready] Release"
        shown = await call_ok(session, "hippo_card_show", {"card_id": 2})
        assert "depends on: #1" in shown and "mcp: go when ready" in shown
    assert query(db, "SELECT id, status FROM cards ORDER BY id") == [(1, "done"), (2, "ready")]


async def test_mcp_card_numbers_past_sqlites_range_are_named(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    async with mcp_session(hippo, cwd=folder) as session:
        refused = await call_error(session, "hippo_card_show", {"card_id": 2**64})
        assert "card_id" in refused and "9223372036854775807" in refused, refused
