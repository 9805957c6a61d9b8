"""A team server's failures say what happened: a database it cannot reach or keep answers 503
`team_unreachable`, and a write whose connection was lost while its COMMIT was in flight answers 503
`commit_unknown`, which a retry with the same Idempotency-Key settles (stored once either way)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import httpx
import psycopg
import pytest
from e2e.harness import Hippo, wait_for

from team.pg_proxy import DroppingProxy
from team.support import PrivatePostgres, create_key, start_server

TENANT = "acme"


def _remember(client: httpx.Client, content: str, key: str) -> httpx.Response:
    return client.post("/v1/memories", json={"content": content}, headers={"Idempotency-Key": key})


def _cut(client: httpx.Client, proxy: DroppingProxy, text: str, key: str, at: str) -> dict[str, str]:
    """Remember `text` while the proxy drops the write's connection `at` its statement or its COMMIT;
    the 503 answer's body."""
    proxy.drop_after(b"INSERT INTO memories", at=at)
    answer = _remember(client, text, key)
    assert proxy.dropped.is_set()
    assert answer.status_code == 503, answer.text
    body: dict[str, str] = answer.json()
    return body


def _stored(dsn: str, content: str, tenant: str = TENANT) -> int:
    """How many rows of `tenant` hold `content`, read by the test itself."""
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FROM memories WHERE tenant_id = %s AND content = %s", (tenant, content)
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture
def proxied(hippo: Hippo, pg_dsn: str, tenant: str) -> Iterator[tuple[httpx.Client, DroppingProxy]]:
    """A team server reaching the worker's database through a DroppingProxy: (its client with a key
    of the test's own tenant, the proxy)."""
    proxy = DroppingProxy(int(psycopg.conninfo.conninfo_to_dict(pg_dsn).get("port") or 5432))
    try:
        url = start_server(hippo, proxy.dsn(pg_dsn))
        key = create_key(hippo, tenant)
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
            yield client, proxy
    finally:
        proxy.close()


@pytest.mark.parametrize(
    ("at", "code", "said", "stored"),
    [
        # Lost before COMMIT: the database rolled the write back.
        ("statement", "team_unreachable", "nothing was written", 0),
        # Lost after COMMIT reached the database, before its answer came back: the write is in.
        ("commit", "commit_unknown", "may or may not be stored", 1),
    ],
)
def test_a_connection_lost_during_a_write_says_what_happened_and_the_same_key_stores_once(
    proxied: tuple[httpx.Client, DroppingProxy],
    pg_dsn: str,
    tenant: str,
    at: str,
    code: str,
    said: str,
    stored: int,
) -> None:
    client, proxy = proxied
    text = f"Releases are cut on Tuesdays ({at})"
    body = _cut(client, proxy, text, f"k-{at}", at=at)
    assert body["code"] == code and said in body["error"], body
    if code == "commit_unknown":
        assert "Idempotency-Key" in body["hint"]
    # A COMMIT whose connection was cut may still be running in its backend when the 503 comes back.
    assert wait_for(lambda: _stored(pg_dsn, text, tenant) == stored, timeout=30)
    again = _remember(client, text, f"k-{at}")
    assert again.status_code == 201, again.text
    assert _stored(pg_dsn, text, tenant) == 1
    found = client.get("/v1/memories", params={"q": f"releases tuesdays {at}"}).json()["results"]
    assert [r["id"] for r in found] == [again.json()["id"]]


@pytest.fixture
def private_pg() -> Iterator[PrivatePostgres]:
    """A PostgreSQL cluster of the test's own, started; stopped and removed afterwards."""
    cluster = PrivatePostgres()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.cleanup()


def test_a_database_restart_answers_team_unreachable_until_it_is_back(
    hippo: Hippo, private_pg: PrivatePostgres
) -> None:
    os.makedirs(hippo.home, exist_ok=True)
    with open(os.path.join(hippo.home, "daemon.json"), "w", encoding="utf-8") as handle:
        json.dump({"team": {"waitSeconds": 1}}, handle)  # a request waits 1 s for a connection
    url = start_server(hippo, private_pg.dsn())
    key = create_key(hippo, TENANT)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
        assert _remember(client, "Lunch is at noon on Fridays", "k-before").status_code == 201
        private_pg.stop()
        for answer in (
            _remember(client, "The build cache lives on the NAS", "k-down"),
            client.get("/v1/memories", params={"q": "lunch"}),
            client.post("/v1/outcome", json={"good": True}),
        ):
            assert answer.status_code == 503, answer.text
            assert answer.json()["code"] == "team_unreachable", answer.text
        # The operator's verbs through the socket say the same in one line, exit 1.
        down = hippo.ctl("status", env=dict(hippo.env, HIPPO_TENANT=TENANT))
        assert down.returncode == 1 and len(down.stderr.strip().splitlines()) == 1, down
        assert "team database" in down.stderr
        private_pg.start()
        # The pool connects again on its own; a client retries with its key until it answers.
        answers: list[httpx.Response] = []
        assert wait_for(
            lambda: (
                answers.append(_remember(client, "The build cache lives on the NAS", "k-down"))
                or answers[-1].status_code != 503
            ),
            timeout=60,
            interval=0.2,
        )
        assert answers[-1].status_code == 201, answers[-1].text
        assert {a.json()["code"] for a in answers[:-1]} <= {"team_unreachable"}
    assert _stored(private_pg.dsn(), "The build cache lives on the NAS") == 1
    with open(hippo.log, encoding="utf-8") as log:
        assert "Traceback" not in log.read()
