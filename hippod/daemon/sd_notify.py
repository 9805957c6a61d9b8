"""systemd's readiness protocol: READY=1 / STOPPING=1 on $NOTIFY_SOCKET (daemon.md §4.9)."""

from __future__ import annotations

import contextlib
import os
import socket
import sys


def notify(message: str) -> None:
    """Send READY=1 / STOPPING=1 to systemd when it asked for notifications."""
    target = os.environ.get("NOTIFY_SOCKET")
    if not target or sys.platform == "win32":
        return
    address = "\0" + target[1:] if target.startswith("@") else target
    with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.sendto(message.encode(), address)
