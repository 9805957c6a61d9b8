"""Frames: a 4-byte big-endian length, then that many bytes of msgpack.

The length is checked against the limit before the body is read, so a bad peer
can never make us allocate more than MAX_FRAME bytes.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    # The client never reads frames asynchronously; asyncio costs it ~20 ms of start-up.
    import asyncio


class Readable(Protocol):
    """What frames are read from: a blocking socket, or the client's end of the daemon's pipe."""

    def recv(self, size: int, /) -> bytes: ...


MAX_FRAME = 16 * 1024 * 1024
_HEADER = struct.Struct(">I")


class FrameError(Exception):
    """A frame broke the framing rules; `code` is the protocol error code to answer with."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def pack(body: bytes, max_frame: int = MAX_FRAME) -> bytes:
    """Prefix an encoded message with its length, refusing one over the limit."""
    if len(body) > max_frame:
        raise FrameError(
            "frame_too_large",
            f"request exceeds the {max_frame // (1024 * 1024)} MiB frame limit ({len(body)} bytes)",
        )
    return _HEADER.pack(len(body)) + body


def check_length(n: int, max_frame: int) -> None:
    """Raise FrameError when a received length prefix is outside 1 … max_frame."""
    if n == 0:
        raise FrameError("bad_frame", "empty frame")
    if n > max_frame:
        raise FrameError("frame_too_large", f"frame of {n} bytes exceeds the limit of {max_frame} bytes")


async def read_frame(reader: asyncio.StreamReader, max_frame: int = MAX_FRAME) -> bytes | None:
    """Read one frame body; None on a clean end of stream before a header."""
    import asyncio

    try:
        header = await reader.readexactly(_HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise
    (n,) = _HEADER.unpack(header)
    check_length(n, max_frame)
    return await reader.readexactly(n)


def recv_frame(sock: Readable, max_frame: int = MAX_FRAME) -> bytes | None:
    """Blocking read of one frame body from a socket; None when the peer closed first."""
    header = _recv_exactly(sock, _HEADER.size)
    if header is None:
        return None
    (n,) = _HEADER.unpack(header)
    check_length(n, max_frame)
    body = _recv_exactly(sock, n)
    if body is None:
        raise ConnectionError("connection closed in the middle of a frame")
    return body


def _recv_exactly(sock: Readable, n: int) -> bytes | None:
    chunks: list[bytes] = []
    remaining = n
    while remaining:
        chunk = sock.recv(min(remaining, 1 << 20))
        if not chunk:
            if remaining == n:
                return None
            raise ConnectionError("connection closed in the middle of a frame")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
