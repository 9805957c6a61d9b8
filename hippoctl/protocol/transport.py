"""The local connection to the daemon: a Unix socket, or on Windows its named pipe.

Both look alike to the code above (framing, the handshake, progress and cancel): a blocking
connection with `settimeout`, `sendall`, `recv` and `close`. Who is at the other end is checked by
the caller (client.py) before it sends anything. Standard library only.
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

    Raises OSError for a failure other than nothing listening (no such pipe, a busy or refusing
    socket, a stale socket file)."""
    if sys.platform == "win32":
        from hippoctl.protocol import winpipe

        return winpipe.connect(path, timeout)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock
