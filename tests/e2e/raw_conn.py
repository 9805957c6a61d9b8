"""A raw connection to a daemon's socket, for tests that send frames no client would."""

from __future__ import annotations

import os
import socket
from typing import Any

import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol.framing import pack, recv_frame
from hippoctl.protocol.version import PROTOCOL

_decode_daemon = msgspec.msgpack.Decoder(m.DaemonMessage).decode


class RawConn:
    """A raw connection to the daemon socket for sending arbitrary frames."""

    def __init__(self, path: str, home: str, timeout: float = 10.0) -> None:
        self.home = home
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)

    def send_bytes(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, message: Any) -> None:
        """Send a protocol struct or a plain dict, msgpack-encoded and framed."""
        self.sock.sendall(pack(msgspec.msgpack.encode(message)))

    def hello(self, protocol: int = PROTOCOL, home: str | None = None) -> m.Message | None:
        self.send(
            m.Hello(
                protocol=protocol,
                client_version="test",
                pid=os.getpid(),
                home=self.home if home is None else home,
            )
        )
        return self.recv()

    def recv(self) -> m.Message | None:
        """The next daemon message, or None when the daemon closed the connection."""
        try:
            raw = recv_frame(self.sock)
        except ConnectionResetError:
            return None
        return None if raw is None else _decode_daemon(raw)

    def at_eof(self) -> bool:
        """True when the daemon has closed its side (reads return nothing, or the peer reset)."""
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawConn:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
