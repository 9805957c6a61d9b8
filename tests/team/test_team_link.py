"""A laptop's hippod in a team: `team join|status|leave`, and `share --team` delivered by the sender
to a real team server, exactly once and in order, also after the server was away."""

from __future__ import annotations

import json

import psycopg
import pytest
from e2e.harness import Hippo
from e2e.sleep_support import make, plant, project
from hippo_memory import HippoSync

from team.support import create_key, free_port, start_server


def _status(laptop: Hippo) -> dict[str, object]:
    done = laptop.ctl("--json", "team", "status")
    assert done.returncode in (0, 1), done.stderr
    reply: dict[str, object] = json.loads(done.stdout)
    return reply


def _until(laptop: Hippo, **wanted: object) -> dict[str, object]:
    """Wait until the laptop's `team status` shows these values (each status also wakes its link)."""
    last: dict[str, object] = {}

    def done() -> bool:
        nonlocal last
        last = _status(laptop)
        return all(last[name] == value for name, value in wanted.items())

    assert laptop.wait_for(done, 120, interval=0.5), (wanted, last)
    return last


def test_join_share_status_and_leave(hippo: Hippo, server: Hippo, pg_fresh_dsn: str) -> None:
    url = start_server(server, pg_fresh_dsn)
    key = create_key(server, "acme")
    hippo.start()
    refused = hippo.ctl("team", "join", url, "--key", "hk_nobody.secret")
    assert refused.returncode == 1 and "refused the key" in refused.stderr
    assert hippo.ctl("team", "join", "ftp://x", "--key", key).returncode == 2
    joined = hippo.json("team", "join", url, "--key", key)
    assert joined["joined"] is True and joined["url"] == url and joined["reachable"] is True
    first = hippo.json("remember", "The staging deploy needs the VPN", "--global")["id"]
    second = hippo.json("remember", "Releases are cut on Tuesdays", "--global")["id"]
    shared = hippo.json("share", "--team", first, second)
    assert shared["queued"] == [first, second]
    _until(hippo, queued=0, sent=2)
    with HippoSync(base_url=url, api_key=key) as member:
        assert [r.content for r in member.recall(q="staging deploy vpn").results] == [
            "The staging deploy needs the VPN"
        ]
    again = hippo.json("share", "--team", first)
    assert again["queued"] == [] and again["already"] == [first]
    left = hippo.json("team", "leave")
    assert left["joined"] is False
    assert hippo.json("team", "status")["joined"] is False
    not_joined = hippo.ctl("share", "--team", first)
    assert not_joined.returncode == 1 and "not in a team" in not_joined.stderr


@pytest.mark.long
def test_an_offline_laptop_queues_a_thousand_shares_that_arrive_once_in_order(
    hippo: Hippo, server: Hippo, pg_fresh_dsn: str
) -> None:
    port = free_port()
    url = start_server(server, pg_fresh_dsn, port)
    key = create_key(server, "acme")
    hippo.start()
    hippo.ok("team", "join", url, "--key", key)
    hippo.stop()
    rows = [make(f"lesson number {n} about service {n % 37}", id=f"mem_{n:012x}") for n in range(1000)]
    plant(hippo.db, rows)
    server.stop()
    hippo.start()
    shared = hippo.json("share", "--team", *(r.id for r in rows))
    assert len(shared["queued"]) == 1000
    away = _status(hippo)
    assert away["reachable"] is False and away["queued"] == 1000
    # The laptop's own recall goes on meanwhile.
    assert "lesson number 7 " in hippo.ok("recall", "lesson number 7", "--global").stdout
    start_server(server, pg_fresh_dsn, port)
    _until(hippo, queued=0, sent=1000)
    with psycopg.connect(pg_fresh_dsn) as conn:
        stored = [c for (c,) in conn.execute("SELECT content FROM memories ORDER BY seq").fetchall()]
    assert stored == [r.content for r in rows]


def test_team_memories_are_recalled_offline_and_a_team_reject_reaches_the_copy(
    hippo: Hippo, server: Hippo, pg_fresh_dsn: str
) -> None:
    port = free_port()
    url = start_server(server, pg_fresh_dsn, port)
    key = create_key(server, "acme")
    with HippoSync(base_url=url, api_key=create_key(server, "acme")) as colleague:
        vpn = colleague.remember(content="The staging deploy needs the VPN")
        colleague.remember(content="Releases are cut on Tuesdays")
    with HippoSync(base_url=url, api_key=create_key(server, "other")) as stranger:
        stranger.remember(content="The staging deploy of another company")
    hippo.start()
    hippo.ok("team", "join", url, "--key", key)
    _until(hippo, cached=2)
    hippo.ok("remember", "Our own note: staging has two nodes", "--global")
    recalled = hippo.ok("recall", "staging deploy vpn", "--global").stdout
    assert "[team]" in recalled and "The staging deploy needs the VPN" in recalled
    assert "another company" not in recalled
    found = hippo.json("recall", "staging deploy vpn", "--global")
    assert {r["source"] for r in found["results"]} == {"team", "global"}

    server.stop()
    offline = hippo.ok("recall", "staging deploy vpn", "--global").stdout
    assert "The staging deploy needs the VPN" in offline

    start_server(server, pg_fresh_dsn, port)
    server.env["HIPPO_TENANT"] = "acme"  # the operator acts for the team's tenant
    server.ok("reject", vpn.id, "--reason", "the VPN is gone")
    _until(hippo, cached=1)
    after = hippo.ok("recall", "staging deploy vpn", "--global").stdout
    assert "needs the VPN" not in after
    assert hippo.json("team", "leave")["joined"] is False
    assert "[team]" not in hippo.ok("recall", "releases tuesdays", "--global").stdout


def test_retrievals_and_outcome_marks_of_team_memories_reach_the_server_in_batches(
    hippo: Hippo, server: Hippo, pg_fresh_dsn: str
) -> None:
    url = start_server(server, pg_fresh_dsn)
    with HippoSync(base_url=url, api_key=create_key(server, "acme")) as colleague:
        vpn = colleague.remember(content="The staging deploy needs the VPN")
        tuesday = colleague.remember(content="Releases are cut on Tuesdays")
    hippo.start()
    hippo.ok("team", "join", url, "--key", create_key(server, "acme"))
    _until(hippo, cached=2)
    # Ten recalls in one session, then a good mark on its last batch and a bad one by id.
    for _ in range(10):
        found = hippo.json("recall", "staging deploy vpn", "--global")
        assert [(r["id"], r["source"]) for r in found["results"]] == [(vpn.id, "team")]
    good = hippo.json("outcome", "--good", "--global")
    assert good["ids"] == [vpn.id] and good["applied"] == 1
    bad = hippo.json("outcome", "--bad", "--id", tuesday.id, "--global")
    assert bad["ids"] == [tuesday.id]
    assert hippo.ctl("outcome", "--bad", "--id", "mem_000000000000", "--global").returncode == 1
    _until(hippo, marks_queued=0, marks_sent=12)
    server.env["HIPPO_TENANT"] = "acme"
    seen = server.json("inspect", vpn.id, "--global")["memory"]
    assert (seen["retrieval_count"], seen["outcome_positive"]) == (10, 1)
    assert server.json("inspect", tuesday.id, "--global")["memory"]["outcome_negative"] == 1
    # One request carried all ten retrievals; each mark is audited under the member's key.
    [batch] = server.json("audit", "list", "--op", "team_retrievals", "--global")["entries"]
    assert batch["metadata"]["retrievals"] == 10 and batch["actor"].startswith("api_key:hk_")
    import httpx

    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {create_key(server, 'acme')}"}) as raw:
        too_many = raw.post("/v1/team/marks", json={"retrieved": [vpn.id] * 1001})
        assert too_many.status_code == 400 and "1000" in too_many.text
        malformed = raw.post("/v1/team/marks", json={"good": ["not an id"]})
        assert malformed.status_code == 400
        gone = raw.post("/v1/team/marks", json={"bad": ["mem_000000000000"]})
        assert gone.json() == {"retrieved": 0, "good": 0, "bad": 0, "again": False}
        # A batch sent again with its key (its answer lost) is applied once.
        for again in (False, True):
            sent = raw.post(
                "/v1/team/marks", json={"good": [vpn.id]}, headers={"Idempotency-Key": "marks:x:7"}
            )
            assert sent.json() == {"retrieved": 0, "good": 0 if again else 1, "bad": 0, "again": again}
    assert server.json("inspect", vpn.id, "--global")["memory"]["outcome_positive"] == 2


def test_sleep_queues_what_it_auto_shares_for_the_team_when_asked(
    hippo: Hippo, server: Hippo, pg_fresh_dsn: str
) -> None:
    url = start_server(server, pg_fresh_dsn)
    key = create_key(server, "acme")
    hippo.start()
    hippo.ok("team", "join", url, "--key", key)
    gotcha = "PowerShell needs -ExecutionPolicy Bypass for unsigned scripts"
    off, _ = project(hippo, "quiet")
    hippo.ok("remember", gotcha, "--tag", "powershell", "--tag", "gotcha", cwd=off)
    assert hippo.json("sleep", cwd=off)["shared_team"] == 0  # autoShareToTeam is off by default
    folder, _ = project(hippo, "loud", config={"autoShareToTeam": True})
    hippo.ok("remember", gotcha + " too", "--tag", "powershell", "--tag", "gotcha", cwd=folder)
    hippo.ok("remember", "The office coffee machine is on floor 3", cwd=folder)
    assert hippo.json("sleep", "--dry-run", cwd=folder)["shared_team"] == 1
    data = hippo.json("sleep", cwd=folder)
    assert data["shared_team"] == 1
    assert hippo.json("sleep", cwd=folder)["shared_team"] == 0  # each memory once
    _until(hippo, queued=0, sent=1)
    with HippoSync(base_url=url, api_key=key) as member:
        assert [r.content for r in member.recall(q="powershell execution policy").results] == [
            gotcha + " too"
        ]


@pytest.mark.long
def test_shares_made_while_the_team_database_is_away_are_queued_and_arrive_once(
    hippo: Hippo, server: Hippo, pg_fresh_dsn: str
) -> None:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    url = start_server(server, pg_fresh_dsn)
    hippo.start()
    hippo.ok("team", "join", url, "--key", create_key(server, "acme"))
    ids = [
        hippo.json("remember", f"Lesson {n}: the build needs cache {n}", "--global")["id"] for n in range(5)
    ]
    name = str(conninfo_to_dict(pg_fresh_dsn)["dbname"])
    with psycopg.connect(make_conninfo(pg_fresh_dsn, dbname="postgres"), autocommit=True) as admin:
        # The database goes away under the running server: its connections dropped, new ones refused.
        admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        try:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
            )
            assert hippo.json("share", "--team", *ids)["queued"] == ids
            away = _until(hippo, queued=5, sent=0, failed=0)
            assert hippo.wait_for(lambda: _status(hippo)["last_error"] is not None, 60), away
        finally:
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
    _until(hippo, queued=0, sent=5, failed=0)
    with psycopg.connect(pg_fresh_dsn) as conn:
        stored = [c for (c,) in conn.execute("SELECT content FROM memories ORDER BY seq").fetchall()]
    assert stored == [f"Lesson {n}: the build needs cache {n}" for n in range(5)]
