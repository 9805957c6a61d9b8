"""Starting the daemon when no one answers on the socket (daemon.md §10.2)."""

from __future__ import annotations

import subprocess
import sys
import time

from hippoctl.protocol.detached import daemon_argv, detached_options

# How long the service manager gets to bring up a daemon before the client spawns one itself.
SERVICE_GRACE = 1.0


def spawn_daemon() -> None:
    """Start `python -m hippod run` (pythonw.exe on Windows) detached from this process; concurrent
    spawns are harmless."""
    subprocess.Popen(
        daemon_argv(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        **detached_options(),
    )


def ask_service_manager(command: list[str], timeout: float) -> bool:
    """Run the service manager's start command; True when it accepted the request in time."""
    kwargs: dict[str, object] = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = subprocess.CREATE_NO_WINDOW
    try:
        done: subprocess.CompletedProcess[bytes] = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=max(0.05, timeout),
            check=False,
            **kwargs,  # type: ignore[call-overload]
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def start_daemon(deadline: float | None = None) -> float | None:
    """Start the daemon: through the installed service when there is one, else by spawning it.

    Returns the monotonic time after which the caller should spawn anyway if nothing answers yet,
    or None when it has spawned already.
    """
    from hippoctl.protocol.service_names import start_command
    from hippoctl.protocol.spool import global_root

    command = start_command(global_root())
    if command is not None:
        now = time.monotonic()
        budget = SERVICE_GRACE if deadline is None else min(SERVICE_GRACE, deadline - now)
        if budget > 0 and ask_service_manager(command, budget):
            return now + SERVICE_GRACE
    spawn_daemon()
    return None
