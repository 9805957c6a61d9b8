"""The scheduled `card reclaim` (daemon.md §12): every `cardReclaimMinutes`, each store opened since
the daemon started and each registered workspace's store gives its expired leases back."""

from __future__ import annotations

import logging
import os

from hippod.base import clock
from hippod.calls.daemon_view import DaemonView
from hippod.lifecycle.card_rows import reclaim_expired
from hippod.store import workspaces
from hippod.store.roots import DB_NAME
from hippod.store.stores import sqlite_only

log = logging.getLogger("hippod.cards")

ACTOR = "daemon:card-reclaim"


def _roots(state: DaemonView) -> list[str]:
    """The stores to visit: opened since start, the registered workspaces' and the global one; only
    those whose database exists (a visit never creates a store)."""
    registry = state.registry
    opened = {r for r in registry.opened if os.path.isfile(os.path.join(r, DB_NAME))}
    return sorted(opened | set(workspaces.store_roots(registry.global_root)))


async def reclaim_all(state: DaemonView) -> int:
    """Reclaim expired leases in every store of `_roots`; returns how many cards went back to ready.
    A store that fails is logged and the others are still visited."""
    total = 0
    for root in _roots(state):
        try:
            store = sqlite_only(await state.registry.open(root), "card reclaim")
            async with store.db.transaction() as conn:
                found = await reclaim_expired(conn, None, clock.iso(clock.now()), ACTOR)
        except Exception as exc:  # one broken store must not stop the others' reclaim
            log.warning("card reclaim in %s failed: %s", root, exc)
            continue
        if found:
            log.info("card reclaim in %s: %s", root, ", ".join(f"#{c} (run {r})" for c, r in found))
        total += len(found)
    return total
