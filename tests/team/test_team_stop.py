"""A laptop's daemon stopped in the middle of a team sync (copying its team's memories and embedding
them) is gone within `shutdownGraceSeconds` + 5 s; after a restart its queued share reaches the team
once, and the copy is whole and embedded."""

from __future__ import annotations

import asyncio
import os

import pytest
from e2e.harness import Hippo
from e2e.stop_support import ACKNOWLEDGED, configure, memories, sigterm_gone, texts, vectors
from hippo_memory import HippoSync

from hippod.store.postgres.pg import TeamDatabase
from team.support import create_key, start_server, store_rows

# Several of the embedding pass's batches (embed/queue.py): the stop comes with some left to embed.
TEAM_MEMORIES = 800


def _team_notes(dsn: str, tenant: str) -> None:
    """TEAM_MEMORIES memories of the tenant, written into the team's database directly."""

    async def fill() -> None:
        db = await TeamDatabase.open(dsn, min_size=1, max_size=2)
        try:
            await store_rows(db, tenant, *texts(TEAM_MEMORIES, seed=5))
        finally:
            await db.close()

    asyncio.run(fill())


@pytest.mark.long
@pytest.mark.embeddings
def test_a_stop_during_a_team_sync_keeps_the_queued_share_and_the_copy_catches_up(
    hippo: Hippo, server: Hippo, pg_fresh_dsn: str
) -> None:
    url = start_server(server, pg_fresh_dsn)
    key = create_key(server, "acme")
    _team_notes(pg_fresh_dsn, "acme")
    configure(hippo)
    hippo.start()
    mine = hippo.json("remember", ACKNOWLEDGED, "--global")["id"]
    hippo.ok("team", "join", url, "--key", key)
    cache = os.path.join(hippo.home, "team-cache", "hippo.db")
    # The copy's memories are embedded in the background once they arrive: seconds of the model's work.
    assert hippo.wait_for(lambda: vectors(cache) > 0, 300), "no team memory was embedded"
    assert hippo.json("share", "--team", mine)["queued"] == [mine]
    assert sigterm_gone(hippo) == 0
    assert vectors(cache) < memories(cache)  # the stop came with some of the copy left to embed

    hippo.start()

    # The share reaches the team once, and comes back with the rest of the copy.
    assert hippo.wait_for(lambda: memories(cache) == TEAM_MEMORIES + 1, 300, interval=0.5), memories(cache)
    with HippoSync(base_url=url, api_key=key) as member:
        found = [r.content for r in member.recall(q="staging deploy vpn").results]
    assert found.count(ACKNOWLEDGED) == 1, found
    assert hippo.wait_for(lambda: vectors(cache) == memories(cache), 900, interval=0.5), vectors(cache)
    assert sigterm_gone(hippo) == 0
