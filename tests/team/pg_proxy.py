"""A TCP proxy between a team server and PostgreSQL that drops a connection at a moment a test picks:
a connection lost in the middle of a write's transaction, or while its COMMIT is in flight.

It reads the PostgreSQL protocol the client sends (the startup message, then typed messages) so it
can tell a write's statement and its COMMIT; the server's answers are copied as they come. The
client must connect without TLS (sslmode=disable, gssencmode=disable)."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading

from psycopg.conninfo import make_conninfo


class DroppingProxy:
    """Listens on 127.0.0.1:`port` and forwards to PostgreSQL at 127.0.0.1:`upstream`."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        # What to drop: a connection that sends a Parse holding `_statement`, right after it (`_at`
        # "statement") or right after its next bare COMMIT (`_at` "commit").
        self._statement: bytes | None = None
        self._at = ""
        self.dropped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def dsn(self, dsn: str) -> str:
        """`dsn` through this proxy, in plain text."""
        return make_conninfo(dsn, host="127.0.0.1", port=self.port, sslmode="disable", gssencmode="disable")

    def drop_after(self, statement: bytes, at: str) -> None:
        """Drop the next connection that parses `statement`: at "statement" right after forwarding it,
        at "commit" right after forwarding that transaction's COMMIT (its answer is never relayed)."""
        with self._lock:
            self._statement, self._at = statement, at
            self.dropped.clear()

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream))
            link = _Link(client, server)
            threading.Thread(target=self._to_client, args=(link,), daemon=True).start()
            threading.Thread(target=self._to_server, args=(link,), daemon=True).start()

    def _to_client(self, link: _Link) -> None:
        while data := _recv(link.server):
            with link.lock:
                if link.cut:
                    continue  # read to the end, so the server sees the connection close cleanly
                try:
                    link.client.sendall(data)
                except OSError:
                    return
        link.close()

    def _to_server(self, link: _Link) -> None:
        """Forward the client's messages one by one, cutting the link where the test asked."""
        head = _exact(link.client, 4)
        if head is None:
            return link.close()
        rest = _exact(link.client, struct.unpack("!I", head)[0] - 4)
        if rest is None:
            return link.close()
        link.server.sendall(head + rest)  # the startup message, untyped
        parsed = False
        while (kind := _exact(link.client, 1)) is not None:
            size = _exact(link.client, 4)
            body = _exact(link.client, struct.unpack("!I", size)[0] - 4) if size is not None else None
            if size is None or body is None:
                break
            with self._lock:
                watched = self._statement
                if watched is not None and kind == b"P" and watched in body:
                    parsed = True
                cut = parsed and (
                    (self._at == "statement" and kind == b"P")
                    or (self._at == "commit" and kind == b"Q" and body == b"COMMIT\x00")
                )
                if cut:
                    self._statement = None
            if cut:
                # Set before the client can see the cut: the test checks it as soon as its request
                # answers, which may be before this thread runs again.
                self.dropped.set()
                with link.lock:
                    link.cut = True
                    link.server.sendall(kind + size + body)
                    # The client is gone at once; the server reads what was sent, then the end.
                    link.client.close()
                    link.server.shutdown(socket.SHUT_WR)
                return None
            link.server.sendall(kind + size + body)
        link.close()
        return None


class _Link:
    def __init__(self, client: socket.socket, server: socket.socket) -> None:
        self.client = client
        self.server = server
        self.lock = threading.Lock()
        self.cut = False

    def close(self) -> None:
        for end in (self.client, self.server):
            with contextlib.suppress(OSError):
                end.close()


def _recv(sock: socket.socket, most: int = 65536) -> bytes:
    try:
        return sock.recv(most)
    except OSError:
        return b""


def _exact(sock: socket.socket, count: int) -> bytes | None:
    """`count` bytes from `sock`, or None at its end."""
    chunks = b""
    while len(chunks) < count:
        data = _recv(sock, count - len(chunks))
        if not data:
            return None
        chunks += data
    return chunks
