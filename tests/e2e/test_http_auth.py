"""Keys, roles and tenants over HTTP, as an attacker would try them (integrations.md §9.4, §9.5):
every refusal answered in the one error shape, and nothing of another tenant changed or shown."""

from __future__ import annotations

import socket
import sqlite3
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from hippo_memory import HippoError, HippoSync

from e2e.http_support import create_key, serve

if TYPE_CHECKING:
    from e2e.harness import Hippo

SECRET_A = "Tenant A deploys through the blue gateway at night"


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _refused(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert isinstance(body["error"], str) and body["error"] and isinstance(body["code"], str), body
    return dict(body)


def _row(hippo: Hippo, memory_id: str) -> tuple[Any, ...]:
    with sqlite3.connect(hippo.db) as conn:
        row = conn.execute(
            "SELECT content, superseded_by, outcome_positive, outcome_negative, kind "
            "FROM memories WHERE id = ?",
            (memory_id,),
        ).fetchone()
    assert row is not None
    return tuple(row)


def test_a_member_is_refused_the_admin_routes(hippo: Hippo) -> None:
    url = serve(hippo)
    member = _bearer(create_key(hippo, role="member"))
    admin_routes = [
        ("POST", "/v1/auth/keys", {"label": "mine"}),
        ("GET", "/v1/auth/keys", None),
        ("DELETE", "/v1/auth/keys/hk_aaaaaaaaaaaaaaaaaaaaaaaa", None),
        ("GET", "/v1/audit", None),
        ("POST", "/v1/sleep", {}),
    ]
    with httpx.Client(base_url=url, headers=member) as client:
        for method, path, body in admin_routes:
            refused = _refused(client.request(method, path, json=body), 403)
            assert refused["code"] == "forbidden" and "admin" in refused["error"], (method, path)
        assert client.post("/v1/memories", json={"content": "A member stores memories"}).status_code == 201
    assert len(hippo.json("auth", "list", "--all")["keys"]) == 1  # the member minted none


def test_another_tenant_cannot_reach_a_memory_by_id_or_by_query(hippo: Hippo) -> None:
    url = serve(hippo)
    key_a, key_b = create_key(hippo, tenant="a"), create_key(hippo, tenant="b")
    with HippoSync(base_url=url, api_key=key_a) as a:
        memory = a.remember(content=SECRET_A).id
        a.remember(content="Tenant A also keeps this one", kind="raw")
        decision = a.decide("Tenant A picks the blue gateway").id
    before = _row(hippo, memory)
    with HippoSync(base_url=url, api_key=key_b) as b:
        assert b.recall(q="deploys blue gateway night").results == []
        assert b.get_context(q="blue gateway").entries == []
        attempts = [
            lambda: b.forget(memory),
            lambda: b.archive(memory, reason="not yours"),
            lambda: b.supersede(memory, new_id=b.remember(content="Tenant B's own text here").id),
            lambda: b.promote(memory),
            lambda: b.drill(memory),
            lambda: b.outcome(good=False, ids=[memory]),
            lambda: b.get_decision(decision),
            lambda: b.close_decision(decision),
            lambda: b.supersede_decision(decision, "Tenant B takes over"),
        ]
        for attempt in attempts:
            with pytest.raises(HippoError) as refused:
                attempt()
            assert refused.value.status_code == 404, refused.value
        assert b.outcome(good=True).applied == 0  # B's own last batch: nothing of A's
    with httpx.Client(base_url=url, headers=_bearer(key_b)) as raw:
        _refused(raw.get(f"/v1/memories/{memory}"), 404)
        _refused(raw.post(f"/v1/memories/{memory}/supersede", json={"content": "Tenant B rewrites it"}), 404)
    assert _row(hippo, memory) == before
    with HippoSync(base_url=url, api_key=key_a) as a:
        assert a.recall(q="deploys blue gateway night").results[0].id == memory
        assert a.get_decision(decision).status == "active"


def test_keys_and_audit_stay_in_their_tenant(hippo: Hippo) -> None:
    url = serve(hippo)
    admin_a, admin_b = (
        create_key(hippo, tenant="a", role="admin"),
        create_key(hippo, tenant="b", role="admin"),
    )
    with HippoSync(base_url=url, api_key=admin_a) as a:
        minted = a.auth_create(label="a-ci", role="member")
        assert minted.tenant_id == "a"
        a.remember(content="Only tenant A audits this remember")
    with HippoSync(base_url=url, api_key=admin_b) as b:
        assert {k.tenant_id for k in b.auth_list(active=False)} == {"b"}
        assert all(e.tenant_id == "b" for e in b.audit(limit=100))
        with pytest.raises(HippoError) as revoke:
            b.auth_revoke(minted.key_id)
        assert revoke.value.status_code == 404
    with httpx.Client(base_url=url, headers=_bearer(admin_b)) as raw:
        # A key's holder mints keys for its own tenant only.
        _refused(raw.post("/v1/auth/keys", json={"tenant": "a"}), 403)
    with httpx.Client(base_url=url) as local:
        # Not even the local user mints keys of another tenant over HTTP: that is the socket's.
        _refused(local.post("/v1/auth/keys", json={"tenant": "c", "role": "member"}), 403)
        made = local.post("/v1/auth/keys", json={"role": "member"})
        assert made.status_code == 201 and made.json()["tenantId"] == "default"


def test_revoked_unknown_and_malformed_credentials_answer_401(hippo: Hippo) -> None:
    url = serve(hippo)
    key = create_key(hippo)
    key_id = key.split(".")[0]
    wrong_secret = key_id + "." + ("a" if key[-1] != "a" else "b") * 32
    unknown = "hk_" + "b" * 24 + "." + "c" * 32
    malformed = [
        "Bearer",
        "Basic dXNlcjpwYXNz",
        "Bearer not-a-key",
        f"Bearer {key_id}",
        f"Bearer {key}.extra",
        f"Token {key}",
        f"Bearer\t{key}",
    ]
    with httpx.Client(base_url=url) as client:
        assert client.get("/v1/memories", params={"q": "deploy"}, headers=_bearer(key)).status_code == 200
        assert (
            client.get(
                "/v1/memories", params={"q": "deploy"}, headers={"Authorization": f"bearer {key}"}
            ).status_code
            == 200
        )
        for header in [*malformed, f"Bearer {wrong_secret}", f"Bearer {unknown}"]:
            refused = _refused(
                client.get("/v1/memories", params={"q": "deploy"}, headers={"Authorization": header}), 401
            )
            assert refused["code"] == "unauthorized", header
        hippo.ok("auth", "revoke", key_id)
        refused = _refused(client.get("/v1/memories", params={"q": "deploy"}, headers=_bearer(key)), 401)
        assert "revoked" in refused["error"]
        # /health needs no key, and a bad one is not even read there.
        assert client.get("/health", headers={"Authorization": "Bearer junk"}).status_code == 200
    listed = hippo.json("auth", "list", "--all")["keys"]
    assert [k["revoked_at"] is not None for k in listed] == [True]


def _outside_address() -> str:
    """An address of this machine that is not loopback (its peer address is not loopback either)."""
    for _, _, _, _, address in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
        if not address[0].startswith("127."):
            return str(address[0])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
        found = probe.getsockname()[0]
    if found.startswith("127."):
        pytest.skip("this machine has no address besides loopback to send a remote request from")
    return str(found)


def test_remote_requests_need_a_key_and_allow_remote_turns_off_the_keyless_path(hippo: Hippo) -> None:
    hippo.start()
    refused = hippo.ctl("serve", "--host", "0.0.0.0", "--port", "0")
    assert refused.returncode == 2 and "--allow-remote" in refused.stderr
    reply = hippo.json("serve", "--host", "0.0.0.0", "--port", "0", "--allow-remote")
    port = reply["port"]
    key = create_key(hippo)
    admin = create_key(hippo, role="admin")
    remote = f"http://{_outside_address()}:{port}"
    local = f"http://127.0.0.1:{port}"
    with httpx.Client() as client:
        refusal = _refused(client.get(f"{remote}/v1/memories", params={"q": "deploy"}), 401)
        assert refusal["code"] == "unauthorized"
        assert (
            client.get(f"{remote}/v1/memories", params={"q": "deploy"}, headers=_bearer(key)).status_code
            == 200
        )
        # With --allow-remote even this machine's requests need a key.
        _refused(client.get(f"{local}/v1/memories", params={"q": "deploy"}), 401)
        # Sleep is for this machine's requests only, whatever the key.
        sleep = _refused(client.post(f"{remote}/v1/sleep", json={}, headers=_bearer(admin)), 403)
        assert "this machine" in sleep["error"]
        assert (
            client.post(f"{local}/v1/sleep", json={"dry_run": True}, headers=_bearer(admin)).status_code
            == 200
        )


def test_require_auth_removes_the_keyless_path(hippo: Hippo) -> None:
    url = serve(hippo, HIPPO_REQUIRE_AUTH="1")
    key = create_key(hippo)
    with httpx.Client(base_url=url) as client:
        _refused(client.post("/v1/memories", json={"content": "Without a key nothing is stored"}), 401)
        assert (
            client.post(
                "/v1/memories", json={"content": "With a key it is stored"}, headers=_bearer(key)
            ).status_code
            == 201
        )
    assert hippo.json("status", "--global")["stores"][0]["total"] == 1
