"""Ask whatever listens on the socket whether it is a live hippod (used by the lock and --detach)."""

from __future__ import annotations

import os

import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol.framing import pack, recv_frame
from hippoctl.protocol.paths import home_override
from hippoctl.protocol.transport import open_local
from hippoctl.protocol.version import PROTOCOL
from hippod import __version__


def ping(path: str, timeout: float = 1.0) -> int | None:
    """The pid of the daemon answering on `path`, or None when nothing answers."""
    try:
        sock = open_local(path, timeout)
        if sock is None:
            return None
        try:
            sock.settimeout(timeout)
            hello = m.Hello(
                protocol=PROTOCOL,
                client_version=__version__,
                pid=os.getpid(),
                home=home_override() or "",
            )
            sock.sendall(pack(msgspec.msgpack.encode(hello)))
            raw = recv_frame(sock)
            if raw is None:
                return None
            reply = msgspec.msgpack.decode(raw, type=m.DaemonMessage)
            return reply.pid if isinstance(reply, m.Welcome) else None
        finally:
            sock.close()
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
