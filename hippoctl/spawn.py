"""Starting the daemon when no one answers on the socket (daemon.md §10.2)."""

from __future__ import annotations

import subprocess
import sys


def spawn_daemon() -> None:
    """Start `python -m hippod run` detached from this process; concurrent spawns are harmless."""
    kwargs: dict[str, object] = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = (
            subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW
        )
    else:
        kwargs["start_new_session"] = True
    subprocess.Popen(
        [sys.executable, "-m", "hippod", "run"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        **kwargs,  # type: ignore[call-overload]
    )
