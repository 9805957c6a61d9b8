"""The daemon's open-file limit: raised at start as far as the hard limit allows (bounded), read by
the HTTP listeners to size their connection cap, and accepts that fail for want of files told once a
minute rather than once each (asyncio logs every failed accept, thousands of lines a second)."""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

from hippod.base.log_throttle import ThrottledWarning

log = logging.getLogger("hippod.files")

# Enough for the stores, the socket's clients and a full HTTP connection cap; the unit files set the
# same (systemd's LimitNOFILE=; launchd leaves the soft limit at 256 and the hard one unlimited).
TARGET = 8192
# What asyncio's selector loop reports for an accept that failed with EMFILE, ENFILE, ENOBUFS or
# ENOMEM (asyncio/selector_events.py); it retries the listener a second later.
ACCEPT_FAILED = "socket.accept() out of system resource"


def soft_limit() -> int | None:
    """The process's soft open-file limit now; None when unlimited or unknown (Windows)."""
    if sys.platform == "win32":
        return None
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def raise_soft_limit(target: int = TARGET) -> tuple[int, int] | None:
    """Raise the soft limit to the hard one, at most `target`; (before, after) when it was raised."""
    if sys.platform == "win32":
        return None
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = target if hard == resource.RLIM_INFINITY else min(hard, target)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return None
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError):
        return None  # e.g. macOS refuses more than kern.maxfilesperproc: the limit stays
    return soft, wanted


def quiet_accept_failures(loop: asyncio.AbstractEventLoop) -> None:
    """Route the loop's failed accepts to one throttled warning; every other report goes where it
    went before."""
    refused = ThrottledWarning(log, "could not accept %d connection(s): %s")

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if context.get("message") == ACCEPT_FAILED and isinstance(exc, OSError):
            refused.note(f"{exc.strerror or exc} (open-file limit {soft_limit() or 'unlimited'})")
            return
        if isinstance(exc, ValueError) and "._start_serving(" in str(context.get("message", "")):
            # asyncio retries the listener a second after each failed accept; a listener closed
            # meanwhile makes each pending retry fail on its closed socket: nothing more to tell.
            return
        loop.default_exception_handler(context)

    loop.set_exception_handler(handle)
