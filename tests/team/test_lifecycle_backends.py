"""The memory lifecycle, run by the daemon's own handlers against each backend: the same requests
and the same expectations on a SQLite store and on the team store on PostgreSQL.

Sleep (merge, dedupe, junk, decay to dormant, retention), conflicts (detected, listed, kept, forgotten,
rejected, resolved again automatically) and the dormant store (listed, restored, forgotten); on
PostgreSQL, two servers sleeping one tenant at once.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from e2e.sleep_support import make

from hippoctl.protocol import messages as m
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.base.tenancy import acting_as
from hippod.calls.request import RequestContext
from hippod.daemon.app import new_state
from hippod.daemon.dispatch import dispatch
from hippod.daemon.state import DaemonState
from hippod.model.memory import Memory
from hippod.store.stores import Store, StoreRegistry

ON = "The feature flag is enabled for production users"
OFF = "The feature flag is disabled for production users"
DEPLOY = "Deploy to staging failed because the migration step was skipped"
STORED = (DEPLOY, f"{DEPLOY} again", f"{DEPLOY} again today", ON, OFF, "Bump version to 2.3.4")


class Life:
    """One backend's store behind the daemon's dispatch, as one tenant."""

    def __init__(self, state: DaemonState, tenant: str, cwd: Path) -> None:
        self.state = state
        self.tenant = tenant
        self.cwd = cwd
        self._ids = itertools.count(1)

    async def run(self, body: Any) -> dict[str, Any]:
        """One request's reply, as the JSON a client would print."""
        request = m.Request(
            id=next(self._ids), cwd=str(self.cwd), body=body, global_store=True, tenant=self.tenant
        )
        reply, _ = await dispatch(RequestContext(request, self.state))
        data: dict[str, Any] = msgspec.to_builtins(reply)
        return data

    async def fails(self, body: Any) -> HippoError:
        with pytest.raises(HippoError) as caught:
            await self.run(body)
        return caught.value

    async def store(self) -> Store:
        registry = self.state.registry
        return await registry.open(registry.global_root)

    async def plant(self, *rows: Memory) -> None:
        """Store rows as they are (old timestamps, pins) through the backend's own rows."""
        store = await self.store()
        with acting_as(self.tenant):
            async with store.db.transaction() as conn:
                for row in rows:
                    row.tenant_id = self.tenant
                    assert await store.rows.insert(conn, row)

    async def remember(self, text: str) -> str:
        return str((await self.run(m.Remember(content=text)))["id"])

    async def inspect(self, memory_id: str) -> dict[str, Any]:
        memory: dict[str, Any] = (await self.run(m.Inspect(id=memory_id)))["memory"]
        return memory

    async def audit_ops(self) -> list[str]:
        rows = (await self.run(m.AuditList(limit=1000)))["entries"]
        return [str(r["op"]) for r in rows]


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str | None:
    """None for a SQLite store, else the DSN of the PostgreSQL database the team store lives in."""
    return None if request.param == "sqlite" else str(request.getfixturevalue("pg_dsn"))


@pytest.fixture
async def life(backend: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Life]:
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HIPPO_EMBEDDINGS", "off")
    registry = StoreRegistry()
    state = new_state(registry, str(tmp_path / "sock"), str(tmp_path / "hippod.log"), 1.0)
    if backend is not None:
        await registry.open_team(backend, pool_max=4, wait=30)
    life = Life(state, "t_" + secrets.token_hex(6), tmp_path)
    assert (await life.store()).team is (backend is not None)
    try:
        yield life
    finally:
        await registry.close_all()


@pytest.fixture(autouse=True)
def _real_clock() -> Iterator[None]:
    """Every test here that fixes the clock (`at`) lets it go afterwards."""
    yield
    clock.set_fake_now(None)


def at(moment: str) -> None:
    clock.set_fake_now(clock.parse_iso(moment))


async def test_sleep_merges_dedupes_drops_junk_and_finds_the_conflict(life: Life) -> None:
    for text in STORED:
        await life.remember(text)
    data = await life.run(m.Sleep(no_share=True))
    assert (data["merged"], data["semantic_created"], data["junk_removed"]) == (5, 2, 1)
    assert data["deduped"]["episodic"] == 2 and data["active"] == 5
    assert data["conflicts"] == {"open": 1, "new": 1, "auto_resolved": 0}
    [merge] = [x for x in data["merges"] if x["text"] == DEPLOY]
    assert len(merge["members"]) == 3
    again = await life.run(m.Sleep(no_share=True, dry_run=True))
    assert again["conflicts"] == {"open": 1, "new": 0, "auto_resolved": 0} and again["merged"] == 0
    ops = await life.audit_ops()
    assert ops.count("junk_delete") == 1 and ops.count("dedupe_delete") == 2 and ops.count("consolidate") == 1


async def test_a_conflict_is_listed_kept_and_stays_resolved(life: Life) -> None:
    on, off = await life.remember(ON), await life.remember(OFF)
    data = await life.run(m.Sleep(no_share=True))
    assert data["conflicts"] == {"open": 1, "new": 1, "auto_resolved": 0}
    [listed] = (await life.run(m.Conflicts()))["conflicts"]
    assert {listed["a"]["id"], listed["b"]["id"]} == {on, off} and listed["status"] == "open"
    assert listed["reason"] == "enabled/disabled mismatch on overlapping statement"
    assert round(listed["score"], 2) == 0.67
    assert (await life.inspect(on))["conflicts_with"] == [off]
    number = listed["id"]
    wrong = await life.fails(m.Resolve(n=number, keep="mem_000000000000"))
    assert wrong.code == "usage" and f"one side of conflict #{number}" in wrong.message
    before = (await life.inspect(off))["half_life_days"]
    done = await life.run(m.Resolve(n=number, keep=on))
    assert (done["kept"], done["loser"], done["action"]) == (on, off, "weakened")
    assert (await life.inspect(off))["half_life_days"] == before / 2
    assert (await life.inspect(on))["conflicts_with"] == []
    # Detected again, but a member resolved it: it stays resolved.
    again = await life.run(m.Sleep(no_share=True))
    assert again["conflicts"] == {"open": 0, "new": 0, "auto_resolved": 0}
    everything = (await life.run(m.Conflicts(status="all")))["conflicts"]
    assert [(c["id"], c["status"], c["resolved_by"]) for c in everything] == [(number, "resolved", "user")]
    assert (await life.fails(m.Resolve(n=number, keep=on))).code == "already_resolved"
    assert (await life.fails(m.Resolve(n=number + 1000))).code == "not_found"
    assert (await life.audit_ops()).count("conflict_resolve") == 1


async def test_a_conflict_no_longer_detected_is_resolved_by_sleep(life: Life) -> None:
    on = await life.remember("Always use Sled for local storage")
    off = await life.remember("Never use Sled for local storage")
    assert (await life.run(m.Sleep(no_share=True)))["conflicts"]["new"] == 1
    await life.run(m.Forget(id=off))
    data = await life.run(m.Sleep(no_share=True))
    assert data["conflicts"] == {"open": 0, "new": 0, "auto_resolved": 1}
    [listed] = (await life.run(m.Conflicts(status="resolved")))["conflicts"]
    assert (listed["status"], listed["resolved_by"]) == ("resolved", "auto")
    assert (await life.inspect(on))["conflicts_with"] == []


async def test_the_loser_forgotten_or_its_value_rejected(life: Life) -> None:
    on, off = await life.remember(ON), await life.remember(OFF)
    works = await life.remember("Background sync works on iOS")
    broken = await life.remember("Background sync is broken on iOS")
    await life.run(m.Sleep(no_share=True))
    listed = {
        frozenset((c["a"]["id"], c["b"]["id"])): c["id"] for c in (await life.run(m.Conflicts()))["conflicts"]
    }
    flag, sync = listed[frozenset((on, off))], listed[frozenset((works, broken))]
    done = await life.run(m.Resolve(n=flag, keep=on, forget=True))
    assert done["action"] == "forgotten"
    assert (await life.fails(m.Inspect(id=off))).code == "not_found"
    done = await life.run(m.Resolve(n=sync, keep=works, reject_loser=True, reason="it works now"))
    assert done["action"] == "rejected"
    refused = await life.fails(m.Remember(content="background SYNC is   broken on iOS"))
    assert "rejected" in refused.message
    [tombstone] = (await life.run(m.Rejections()))["rejections"]
    assert (tombstone["reason"], tombstone["source_memory_id"]) == ("it works now", broken)
    assert (await life.audit_ops()).count("reject_value") == 1


async def test_decay_to_dormant_then_restore_forget_and_expire(life: Life) -> None:
    pinned = make("Pinned: the release checklist lives in docs/release.md", pinned=True)
    plain = make("Plain fact that fades: the office wifi is slow")
    other = make("Another fading fact: the coffee machine is on floor 3")
    secret = make("Staging password=Tr0ub4dor&3xyz for the admin user")
    await life.plant(pinned, plain, other, secret)
    at("2100-01-01T00:00:00Z")
    data = await life.run(m.Sleep(no_share=True))
    assert (data["removed"], data["dormant_moved"], data["secret_deleted"]) == (3, 2, 1)
    assert sorted(d["id"] for d in data["went_dormant"]) == sorted((plain.id, other.id))
    assert (await life.fails(m.Inspect(id=plain.id))).code == "not_found"
    listed = await life.run(m.Dormant(query="wifi"))
    assert listed["total"] == 1 and [(d["id"], d["reason"]) for d in listed["results"]] == [
        (plain.id, "faded")
    ]
    assert (await life.run(m.Dormant()))["total"] == 2
    # Restored: live again, found by recall, with a fresh clock.
    assert (await life.run(m.DormantRestore(id=plain.id)))["restored"] is True
    restored = await life.inspect(plain.id)
    assert restored["strength"] == 1.0 and restored["last_retrieved"].startswith("2100-01-01")
    found = await life.run(m.Recall(query="office wifi"))
    assert [r["id"] for r in found["results"]] == [plain.id]
    assert (await life.fails(m.DormantRestore(id=plain.id))).code == "not_found"
    # The other one, past the 180 days of retention, expires at the next sleep.
    at("2100-08-01T00:00:00Z")
    later = await life.run(m.Sleep(no_share=True))
    assert later["dormant_expired"] == 1 and (await life.run(m.Dormant()))["total"] == 0
    assert (await life.inspect(pinned.id))["pinned"] is True
    ops = await life.audit_ops()
    assert ops.count("dormant_move") == 2 and ops.count("dormant_restore") == 1
    assert ops.count("dormant_expire") == 1 and ops.count("decay_delete_secret") == 1


async def test_dormant_forget_and_reject_reach_the_dormant_copy(life: Life) -> None:
    kept = make("The nightly export writes to the archive bucket")
    gone = make("The nightly export once wrote to the old bucket")
    await life.plant(kept, gone)
    at("2100-01-01T00:00:00Z")
    assert (await life.run(m.Sleep(no_share=True)))["dormant_moved"] == 2
    assert (await life.run(m.DormantForget(id=gone.id)))["forgotten"] is True
    assert (await life.fails(m.DormantForget(id=gone.id))).code == "not_found"
    await life.run(m.Reject(value=kept.content, reason="wrong bucket"))
    assert (await life.run(m.Dormant()))["total"] == 0


async def test_a_memory_restored_from_dormant_is_checked_again(life: Life) -> None:
    at("2026-01-01T00:00:00Z")
    old = await life.remember(ON)
    at("2031-01-02T00:00:00Z")
    assert (await life.run(m.Sleep(no_share=True)))["dormant_moved"] == 1
    await life.remember(OFF)
    assert (await life.run(m.Sleep(no_share=True)))["conflicts"]["open"] == 0  # the old side is dormant
    await life.run(m.DormantRestore(id=old))
    assert (await life.run(m.Sleep(no_share=True)))["conflicts"] == {"open": 1, "new": 1, "auto_resolved": 0}


async def test_two_servers_sleeping_one_tenant_at_once_write_it_once(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second sleep waits for the first's lock, finds the rows it read changed, plans again."""
    monkeypatch.setenv("HIPPO_EMBEDDINGS", "off")
    tenant = "t_" + secrets.token_hex(6)
    servers: list[Life] = []
    for n in (1, 2):
        monkeypatch.setenv("HIPPO_HOME", str(tmp_path / f"server{n}"))
        registry = StoreRegistry()
        state = new_state(registry, str(tmp_path / f"sock{n}"), str(tmp_path / f"log{n}"), 1.0)
        await registry.open_team(pg_dsn, pool_max=4, wait=30)
        servers.append(Life(state, tenant, tmp_path))
    try:
        fading = [make(f"Fading fact number {n}: the build server {n} is slow") for n in range(40)]
        await servers[0].plant(*fading)
        for text in STORED:
            await servers[1].remember(text)
        at("2100-01-01T00:00:00Z")
        first, second = await asyncio.gather(*(s.run(m.Sleep(no_share=True)) for s in servers))
        # One wrote the run; the other, planning again behind it, found nothing left to fade.
        assert sorted((first["dormant_moved"], second["dormant_moved"])) == [0, 40 + len(STORED)]
        assert (await servers[0].run(m.Dormant(limit=100)))["total"] == 40 + len(STORED)
        ops = await servers[1].audit_ops()
        assert ops.count("dormant_move") == 40 + len(STORED) and ops.count("consolidate") == 2
    finally:
        for server in servers:
            await server.state.registry.close_all()
