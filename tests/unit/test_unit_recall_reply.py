"""A recall's reply does not wait for its own strengthening, which is written after it (recall.md §12).

The daemon's own dispatch runs here on a real store; only the strengthening statement is held back
until the test lets it go, so a reply that waited for it would never come.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import aiosqlite
import pytest

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import RecallReply
from hippod.calls.request import RequestContext
from hippod.daemon.app import new_state
from hippod.daemon.dispatch import dispatch
from hippod.daemon.state import DaemonState
from hippod.store.sqlite import memories
from hippod.store.stores import StoreRegistry


@pytest.fixture
async def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[DaemonState]:
    """The daemon's state over a fresh global store in the test's folder."""
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))
    registry = StoreRegistry()
    daemon = new_state(registry, str(tmp_path / "sock"), str(tmp_path / "hippod.log"), 1.0)
    try:
        yield daemon
    finally:
        await registry.close_all()


def _request(state: DaemonState, cwd: Path, n: int, body: m.Remember | m.Recall) -> RequestContext:
    return RequestContext(m.Request(id=n, cwd=str(cwd), body=body, global_store=True), state)


async def test_the_reply_goes_out_while_its_strengthening_waits(
    state: DaemonState, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await dispatch(_request(state, tmp_path, 1, m.Remember(content="the staging deploy needs the VPN")))

    release = asyncio.Event()
    strengthen = memories.strengthen

    async def held(conn: aiosqlite.Connection, ids: Sequence[str], now: str, bonus_days: float) -> None:
        await release.wait()
        await strengthen(conn, ids, now, bonus_days)

    monkeypatch.setattr(memories, "strengthen", held)
    recall = asyncio.ensure_future(dispatch(_request(state, tmp_path, 2, m.Recall(query="staging deploy"))))
    # Before the fix the token ledger's row waited for the store to settle, strengthening included.
    done, _ = await asyncio.wait({recall}, timeout=60)
    release.set()
    assert recall in done, "the recall's reply waited for its own strengthening"
    answer, _ = recall.result()
    assert isinstance(answer, RecallReply), answer
    [item] = answer.results
    assert item.retrieval_count == 0  # the reply was built before the strengthening

    await state.registry.settled()
    store = await state.registry.open(state.registry.global_root)
    [[count]] = await store.db.reader.execute_fetchall(
        "SELECT retrieval_count FROM memories WHERE id = ?", [item.id]
    )
    assert count == 1  # and the strengthening was made once let go
