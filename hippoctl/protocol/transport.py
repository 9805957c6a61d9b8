"""The local connection to the daemon: a Unix socket, or on Windows its named pipe.

Both look alike to the code above (framing, the handshake, progress and cancel): a blocking
connection with `settimeout`, `sendall`, `recv` and `close`. Standard library only.
"""

from __future__ import annotations

import socket
import sys
from typing import Protocol


class Connection(Protocol):
    """A connected, blocking byte stream to the daemon; `recv` returns b"" once it has closed."""

    def settimeout(self, timeout: float | None, /) -> None: ...

    def sendall(self, data: bytes, /) -> None: ...

    def recv(self, size: int, /) -> bytes: ...

    def close(self) -> None: ...


def open_local(path: str, timeout: float) -> Connection | None:
    """A connection to whatever serves `path`, or None when nothing accepts there.

    On Windows, where any user may create a pipe of any name, a pipe served by another user's
    process counts as nothing listening (client.py refuses it by name instead). Raises OSError for
    a failure other than nothing listening."""
    if sys.platform == "win32":
        from hippoctl.protocol import winpipe

        try:
            return winpipe.connect_checked(path, timeout)
        except winpipe.NotThisUsers:
            return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock
