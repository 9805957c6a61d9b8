"""Memories queued for the team server (docs/team.md): rows of the global store's `team_outbox`, which
the sender (teamlink/sender.py) delivers."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from hippod.base import clock
from hippod.calls.daemon_view import DaemonView
from hippod.model.memory import Memory
from hippod.store.sqlite import team_outbox
from hippod.store.stores import sqlite_only


def wake_sender(state: DaemonView) -> None:
    """Have the sender look at the outbox now rather than at its next round."""
    if state.team_sender is not None:
        state.team_sender.wake()


def shared_body(memory: Memory) -> bytes:
    """The memory as a team server's `POST /v1/memories` takes it; this laptop's folder tags left out."""
    tags = [t for t in memory.tags if not t.startswith("path:")]
    return msgspec.json.encode({"content": memory.content, "tags": tags})


async def queue_shares(state: DaemonView, found: Sequence[Memory], *, dry_run: bool = False) -> list[bool]:
    """Queue copies of these memories for the team server, in order, in one transaction, and wake the
    sender; for each, whether it was new (a memory is queued for its team once). A dry run only
    tells."""
    rows = [(share_key(memory), shared_body(memory).decode()) for memory in found]
    registry = state.registry
    store = sqlite_only(await registry.open(registry.global_root), "share --team")
    if dry_run:
        known = await team_outbox.known(store.db.reader, [key for key, _ in rows])
        return [key not in known for key, _ in rows]
    async with store.db.transaction() as conn:
        added = await team_outbox.enqueue(conn, rows, clock.iso(clock.now()))
    wake_sender(state)
    return added


def share_key(memory: Memory) -> str:
    """The outbox key that queues a memory for its team once."""
    return f"share:{memory.id}"
