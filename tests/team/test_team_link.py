"""A laptop's hippod in a team: `team join|status|leave`, and `share --team` delivered by the sender
to a real team server, exactly once and in order, also after the server was away."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator

import psycopg
import pytest
from e2e.harness import Hippo
from e2e.sleep_support import make, plant
from hippo_memory import HippoSync

from team.support import create_key, free_port, start_server


@pytest.fixture
def server(pg_fresh_dsn: str) -> Iterator[Hippo]:
    """A team server's instance (not started): its own folders, beside the laptop's `hippo`."""
    instance = Hippo(tempfile.mkdtemp(prefix="hs", dir="/tmp"))
    try:
        yield instance
    finally:
        instance.cleanup()
        shutil.rmtree(instance.root, ignore_errors=True)


def _status(laptop: Hippo) -> dict[str, object]:
    done = laptop.ctl("--json", "team", "status")
    assert done.returncode in (0, 1), done.stderr
    reply: dict[str, object] = json.loads(done.stdout)
    return reply


def _sent(laptop: Hippo, count: int, timeout: float = 60) -> dict[str, object]:
    """Wait until the laptop's queue is empty and `count` writes were sent; the last status."""
    last: dict[str, object] = {}

    def done() -> bool:
        nonlocal last
        last = _status(laptop)
        return last["queued"] == 0 and last["sent"] == count

    assert laptop.wait_for(done, timeout, interval=0.5), last
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
    _sent(hippo, 2)
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
    _sent(hippo, 1000, timeout=120)
    with psycopg.connect(pg_fresh_dsn) as conn:
        stored = [c for (c,) in conn.execute("SELECT content FROM memories ORDER BY seq").fetchall()]
    assert stored == [r.content for r in rows]
