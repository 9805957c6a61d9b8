"""At start the daemon opens the stores it knows of (the global one and each registered workspace's)
in the background, and opening a store heals its mirrors (mirrors/mirror_heal.py): a mirror a killed
daemon left behind, or one put back by hand, goes without waiting for a request or a sleep."""

from __future__ import annotations

import asyncio
import logging

from hippod.base.errors import HippoError
from hippod.daemon.state import DaemonState
from hippod.store import workspaces

log = logging.getLogger("hippod.mirrors")


async def open_known_stores(state: DaemonState) -> None:
    """Open each known store in turn; one that fails is logged and the others are still opened."""
    for root in workspaces.store_roots(state.registry.global_root):
        if state.shutdown.is_set():
            return
        try:
            await state.registry.open(root)
        except HippoError as exc:
            log.warning("opening %s to heal its mirrors failed: %s", root, exc.message)
        except Exception:  # one broken store must not keep the others' mirrors unhealed
            log.exception("opening %s to heal its mirrors failed", root)


def start(state: DaemonState) -> None:
    """Run open_known_stores as a background task of the daemon (shutdown waits for it, then cancels)."""
    task = asyncio.get_running_loop().create_task(open_known_stores(state))
    state.background.add(task)
    task.add_done_callback(state.background.discard)
