"""The HTTP API's limits and its one error shape (integrations.md §9.6): bodies over 1 MiB, the token
bucket per address, encoded slashes and bad ids, malformed bodies; and nothing half-written."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from e2e.http_support import github_headers, serve, slack_headers

if TYPE_CHECKING:
    from e2e.harness import Hippo

MIB = 1024 * 1024
TOO_DEEP = "the body is nested too deep"


def _error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["code"] == code and isinstance(body["error"], str) and body["error"], body
    return dict(body)


# As the SDK sends every call: a POST without a key must say it carries JSON (see test_http_local.py).
JSON = {"Content-Type": "application/json"}


def _raw(url: str, request: bytes) -> bytes:
    """Send bytes as they are (no client would send these) and read the whole answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_bodies_over_a_mebibyte_are_refused_and_nothing_is_stored(hippo: Hippo) -> None:
    url = serve(hippo)
    big = "x" * (MIB + 10)
    with httpx.Client(base_url=url, headers=JSON) as client:
        _error(client.post("/v1/memories", json={"content": big}), 413, "payload_too_large")

        def chunks() -> Iterator[bytes]:  # no Content-Length: the size is counted as it arrives
            for _ in range(20):
                yield b"y" * (MIB // 10)

        _error(client.post("/v1/memories", content=chunks()), 413, "payload_too_large")
        just_under = "z" * (MIB - 100)
        assert client.post("/v1/memories", json={"content": just_under}).status_code == 201
    assert hippo.json("status", "--global")["stores"][0]["total"] == 1


def test_the_token_bucket_answers_429_with_retry_after(hippo: Hippo) -> None:
    url = serve(hippo, rps="5")  # a burst of 10, then 5 a second
    with httpx.Client(base_url=url, headers=JSON) as client:
        answers = [client.get("/v1/decisions") for _ in range(30)]
        limited = [r for r in answers if r.status_code == 429]
        assert limited and answers[0].status_code == 200
        assert all(r.headers["retry-after"] == "1" for r in limited)
        _error(limited[0], 429, "rate_limited")
        assert client.get("/health").status_code == 200  # outside /v1: never limited
        time.sleep(1.2)
        assert client.get("/v1/decisions").status_code == 200


def test_paths_ids_and_bodies_are_checked_at_the_door(hippo: Hippo) -> None:
    url = serve(hippo)
    with httpx.Client(base_url=url, headers=JSON) as client:
        made = client.post("/v1/memories", json={"content": "An id to aim the checks at"}).json()["id"]
        _error(client.get("/v1/memories/mem_a%2Fb"), 400, "bad_request")
        _error(client.get("/v1/memories/mem_a%2fb"), 400, "bad_request")
        _error(client.get("/v1/memories/" + "a" * 257), 400, "bad_request")
        _error(client.get("/v1/memories/mem%20space"), 400, "bad_request")
        _error(client.get("/v1/memories/no_such_memory"), 404, "not_found")
        _error(client.post("/v1/memories", content=b"{not json"), 400, "bad_request")
        _error(client.post("/v1/memories", content=b"[1, 2]"), 400, "bad_request")
        _error(client.post("/v1/memories", json={"content": 42}), 400, "bad_request")
        _error(client.post("/v1/memories", json={"content": "ok text", "tags": "one"}), 400, "bad_request")
        _error(client.post("/v1/memories", json={"content": "ok text", "kind": "superseded"}), 400, "usage")
        _error(client.post("/v1/memories", json={"content": "a"}), 400, "usage")
        _error(client.post("/v1/outcome", json={"good": "yes"}), 400, "bad_request")
        _error(client.post("/v1/outcome", json={"good": True, "ids": [made] * 1001}), 400, "usage")
        _error(client.get("/v1/memories"), 400, "bad_request")
        _error(client.get("/v1/memories", params={"q": "deploy", "limit": "0"}), 400, "bad_request")
        _error(client.get("/v1/memories", params={"q": "deploy", "limit": "ten"}), 400, "bad_request")
        _error(client.get("/v1/memories", params={"q": "deploy", "mode": "quantum"}), 400, "bad_request")
        _error(client.get("/v1/decisions/99999999999999999999"), 400, "usage")
        _error(client.post(f"/v1/memories/{made}/supersede", json={}), 400, "bad_request")
        _error(client.get("/v1/nowhere"), 404, "not_found")
        _error(client.put("/v1/memories"), 405, "method_not_allowed")
        assert client.head("/health").status_code == 200
    # A request line no client sends: answered by the server, never a crash.
    raw = _raw(url, b"GET /v1/memories?q=\xff\xfe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 4"), raw[:80]
    assert hippo.json("status", "--global")["stores"][0]["total"] == 1
    assert "Traceback" not in Path(hippo.log).read_text(encoding="utf-8")


def test_the_listener_closes_and_lives_and_dies_with_the_daemon(hippo: Hippo) -> None:
    url = serve(hippo)
    status = hippo.json("daemon", "status")
    assert status["http"] == url
    assert url in hippo.ok("daemon", "status").stdout
    assert hippo.ok("serve", "--stop").stdout.startswith(f"Stopped serving on {url}")
    assert hippo.json("daemon", "status")["http"] is None
    assert hippo.ok("serve", "--stop").stdout.strip() == "No HTTP listener was open."
    try:
        httpx.get(f"{url}/health", timeout=2)
        raise AssertionError("the listener still answers after serve --stop")
    except httpx.ConnectError:
        pass
    again = hippo.json("serve", "--port", url.rsplit(":", 1)[1])
    assert again["url"] == url and httpx.get(f"{url}/health").status_code == 200
    assert hippo.stop() == 0
    try:
        httpx.get(f"{url}/health", timeout=2)
        raise AssertionError("the listener outlived its daemon")
    except httpx.ConnectError:
        pass


def test_a_taken_port_is_named(hippo: Hippo) -> None:
    hippo.start()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = hippo.ctl("serve", "--port", str(port))
    assert done.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_autostart_and_hippo_port(hippo: Hippo) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    os.makedirs(hippo.home, exist_ok=True)
    with open(os.path.join(hippo.home, "daemon.json"), "w", encoding="utf-8") as handle:
        json.dump({"http": {"autostart": True}}, handle)
    hippo.env["HIPPO_PORT"] = str(port)
    hippo.start()
    assert hippo.wait_for(lambda: hippo.json("daemon", "status")["http"] == f"http://127.0.0.1:{port}", 10)
    assert httpx.get(f"http://127.0.0.1:{port}/health").json()["pid"] == hippo.proc.pid  # type: ignore[union-attr]


def test_a_body_nested_too_deep_is_a_bad_request_on_every_route_that_reads_json(hippo: Hippo) -> None:
    from hippod.web.app import OPS

    url = serve(hippo, SLACK_SIGNING_SECRET="slack-secret", GITHUB_WEBHOOK_SECRET="github-secret")
    deep = b'{"content":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    routes = [op for op in OPS if op.body is not None]
    assert len(routes) > 10
    with httpx.Client(base_url=url) as client:
        for op in routes:
            path = op.path.replace("{id}", "mem_x").replace("{n:int}", "1")
            answer = client.post(path, content=deep, headers={"content-type": "application/json"})
            assert _error(answer, 400, "bad_request")["error"] == TOO_DEEP, op.path
        # A signed webhook delivery answers 200 whatever its body holds: this one is a dead letter.
        slack = client.post(
            "/v1/connectors/slack/events", content=deep, headers=slack_headers("slack-secret", deep)
        )
        github = client.post(
            "/v1/connectors/github/events",
            content=deep,
            headers=github_headers("github-secret", deep, "issues", "delivery-1"),
        )
        for answer in (slack, github):
            assert answer.status_code == 200 and answer.json()["status"] == "dlq", answer.text
    for source in ("slack", "github"):
        letters = hippo.json(source, "dlq", "list")["letters"]
        assert [(d["bucket"], d["error"]) for d in letters] == [("parse_error", TOO_DEEP)]
    assert "Traceback" not in Path(hippo.log).read_text(encoding="utf-8")
    assert " ERROR " not in Path(hippo.log).read_text(encoding="utf-8")
