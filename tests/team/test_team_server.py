"""`hippod serve --team`: the HTTP API over the team's PostgreSQL database, reached by the original's
SDK (hippo_memory), with two server processes side by side over one database."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator

import pytest
from e2e.harness import Hippo
from hippo_memory import Hippo as AsyncHippo
from hippo_memory import HippoError, HippoSync

from team.support import create_key, start_server


@pytest.fixture
def two_servers(hippo: Hippo, pg_dsn: str) -> Iterator[tuple[str, str, Hippo]]:
    """Two team servers over the worker's database: (url of the first, url of the second, the first)."""
    other = Hippo(tempfile.mkdtemp(prefix="hq", dir="/tmp"))
    first = start_server(hippo, pg_dsn)
    try:
        second = start_server(other, pg_dsn)
        yield first, second, hippo
    finally:
        other.cleanup()
        shutil.rmtree(other.root, ignore_errors=True)


def test_what_one_server_stores_the_other_recalls(two_servers: tuple[str, str, Hippo], tenant: str) -> None:
    first, second, hippo = two_servers
    key = create_key(hippo, tenant)
    with HippoSync(base_url=first, api_key=key) as a, HippoSync(base_url=second, api_key=key) as b:
        made = a.remember(content="The staging deploy needs the VPN", tags=["ops"])
        a.remember(content="Lunch is at noon on Fridays")
        found = b.recall(q="staging deploys vpn", limit=5)
        assert [r.id for r in found.results] == [made.id]
        # The outcome goes to the batch the key's last recall returned, whichever server served it.
        assert a.outcome(good=True).ids == [made.id]
        newer = b.remember(content="The staging deploy needs the VPN and a hardware token")
        assert a.supersede(made.id, new_id=newer.id).superseded_by == newer.id
        assert [r.id for r in b.recall(q="staging deploy vpn").results] == [newer.id]


def test_a_tenant_never_sees_another_tenants_memories(
    two_servers: tuple[str, str, Hippo], tenant: str
) -> None:
    first, second, hippo = two_servers
    ours, theirs = create_key(hippo, tenant), create_key(hippo, tenant + "_other")
    with HippoSync(base_url=first, api_key=ours) as a, HippoSync(base_url=second, api_key=theirs) as b:
        made = a.remember(content="The billing service rotates its keys monthly")
        assert b.recall(q="billing keys rotates").results == []
        with pytest.raises(HippoError) as caught:
            b.outcome(good=False, ids=[made.id])
        assert caught.value.status_code == 404
        with pytest.raises(HippoError) as caught:
            b.supersede(made.id, new_id=made.id)
        assert caught.value.status_code in (400, 404)
        assert [r.id for r in a.recall(q="billing keys").results] == [made.id]


async def test_two_members_superseding_one_memory_at_once_one_wins(
    two_servers: tuple[str, str, Hippo], tenant: str
) -> None:
    first, second, hippo = two_servers
    key = create_key(hippo, tenant)
    async with AsyncHippo(base_url=first, api_key=key) as a, AsyncHippo(base_url=second, api_key=key) as b:
        old = await a.remember(content="CI runs on node 18")
        mine = await a.remember(content="CI runs on node 20")
        yours = await b.remember(content="CI runs on node 22")
        results = await asyncio.gather(
            a.supersede(old.id, new_id=mine.id), b.supersede(old.id, new_id=yours.id), return_exceptions=True
        )
    won = [r for r in results if not isinstance(r, BaseException)]
    lost = [r for r in results if isinstance(r, HippoError)]
    assert len(won) == 1 and len(lost) == 1, results
    assert lost[0].status_code == 409
    assert "superseded" in str(lost[0])


def test_a_server_without_its_database_says_so_in_one_line(hippo: Hippo) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hippod",
            "serve",
            "--team",
            "postgresql://nobody@127.0.0.1:1/none",
            "--port",
            "0",
        ],
        env=hippo.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("hippod: the team database postgresql://127.0.0.1:1/none cannot be used:")
    assert "Traceback" not in done.stderr


def test_the_daily_run_sleeps_each_tenant_once_whichever_servers_run_it(
    hippo: Hippo, pg_fresh_dsn: str
) -> None:
    other = Hippo(tempfile.mkdtemp(prefix="hq", dir="/tmp"))
    try:
        urls = [start_server(hippo, pg_fresh_dsn), start_server(other, pg_fresh_dsn)]
        keys = {t: create_key(hippo, t, role="admin") for t in ("acme", "beta")}
        deploy = "Deploy to staging failed because the migration step was skipped"
        with HippoSync(base_url=urls[0], api_key=keys["acme"]) as acme:
            for text in (deploy, f"{deploy} again", f"{deploy} again today"):
                acme.remember(content=text)
        with HippoSync(base_url=urls[1], api_key=keys["beta"]) as beta:
            beta.remember(content="Releases are cut on Tuesdays")
        # Both servers' runs at once, as their schedules would start them.
        runs = [
            subprocess.Popen(
                [sys.executable, "-m", "hippoctl", "--json", "daily-runner"],
                cwd=server.root,
                env=server.env,
                stdout=subprocess.PIPE,
                text=True,
            )
            for server in (hippo, other)
        ]
        replies = [json.loads(run.communicate(timeout=120)[0]) for run in runs]
        assert all(r["run"]["ok"] and r["run"]["workspaces"] == 3 for r in replies)  # acme, beta, default
        for tenant, url in (("acme", urls[1]), ("beta", urls[0])):
            with HippoSync(base_url=url, api_key=keys[tenant]) as client:
                assert len(client.audit(op="consolidate")) == 1, tenant
        with HippoSync(base_url=urls[1], api_key=keys["acme"]) as acme:
            [merged] = [
                r for r in acme.recall(q="deploy staging migration").results if r.id.startswith("sem_")
            ]
            assert merged.content.startswith("[Consolidated pattern from 3 related memories]")
        # A second run the same day leaves them be.
        again = hippo.ok("daily-runner")
        assert again.stdout.count("sleep: skipped (slept at ") == 3, again.stdout
        with HippoSync(base_url=urls[0], api_key=keys["acme"]) as client:
            assert len(client.audit(op="consolidate")) == 1
        for server in (hippo, other):  # nothing failed behind the answers (an autoSleep check, say)
            with open(server.log, encoding="utf-8") as log:
                assert "Traceback" not in log.read()
    finally:
        other.cleanup()
        shutil.rmtree(other.root, ignore_errors=True)


def test_marks_made_at_once_through_two_servers_all_count(
    two_servers: tuple[str, str, Hippo], tenant: str
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    first, second, hippo = two_servers
    key = create_key(hippo, tenant)
    with HippoSync(base_url=first, api_key=key) as client:
        made = client.remember(content="The release checklist lives in docs/release.md")

    def mark(n: int) -> int:
        with HippoSync(base_url=(first, second)[n % 2], api_key=key) as member:
            return member.outcome(good=n % 3 != 0, ids=[made.id]).applied

    with ThreadPoolExecutor(max_workers=12) as pool:
        assert sum(pool.map(mark, range(36))) == 36
    import httpx

    stored = httpx.get(f"{second}/v1/memories/{made.id}", headers={"Authorization": f"Bearer {key}"}).json()
    assert (stored["outcomePositive"], stored["outcomeNegative"]) == (24, 12)
