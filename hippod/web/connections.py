"""How the daemon's two HTTP listeners bound their connections: uvicorn's HTTP/1.1 protocol (h11)
with the deadlines its own settings leave out, and a cap on connections shared by both listeners.

uvicorn 0.55 closes a connection idle after an answer (timeout_keep_alive) and nothing else: a client
that connects and sends nothing, sends its headers a byte at a time or stops halfway through its body
holds its connection, and one of the daemon's files, for ever. Here a connection must send its request
headers within a bound (counted from the connection, or from the first byte of a later request) and
its body within another (counted from the end of the headers).

The cap is checked as a connection is accepted (`GatedSocket`), before asyncio gives it a transport,
a protocol and a task: asyncio accepts a whole queue of connections in one pass and makes their
protocols later, so a check there alone would let a burst take the daemon's last files. Past the cap
a connection hears 503 and is closed at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import socket
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from hippod.base.config import DAEMON_DEFAULTS
from hippod.base.file_limits import soft_limit
from hippod.base.log_throttle import ThrottledWarning
from hippod.web.errors import error_body

log = logging.getLogger("hippod.web")

# What a connection past the cap hears before it is closed: the one error shape, ready made.
_REFUSED_BODY = error_body("too_many_connections", "too many connections; retry in a second")
REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"content-type: application/json\r\n"
    b"retry-after: 1\r\n"
    b"connection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_REFUSED_BODY), _REFUSED_BODY)
)


@dataclass(frozen=True)
class Bounds:
    """How long a connection may take over each part of a request, and how many may be open."""

    header_seconds: float
    body_seconds: float
    keep_alive_seconds: float
    max_connections: int

    @classmethod
    def from_config(cls, http: dict[str, Any]) -> Bounds:
        """From daemon.json's `http` section (checked by hippod/base/config.py; defaults where absent)."""
        given = {**DAEMON_DEFAULTS["http"], **http}
        return cls(
            float(given["headerTimeoutSeconds"]),
            float(given["bodyTimeoutSeconds"]),
            float(given["keepAliveSeconds"]),
            int(given["maxConnections"]),
        )

    @property
    def keep_alive_whole_seconds(self) -> int:
        """uvicorn's timeout_keep_alive, which it types as whole seconds."""
        return max(1, math.ceil(self.keep_alive_seconds))


def cap_for(soft: int | None, configured: int) -> int:
    """The most HTTP connections held at once: `configured`, but fewer than the open-file limit
    `soft` (None: unlimited) by a quarter of it (at least 64, at most half), which stays for the
    stores, the log, the socket's clients and children's pipes."""
    if soft is None:
        return max(1, configured)
    reserve = max(soft // 4, min(64, soft // 2))
    return max(1, min(configured, soft - reserve))


class Budget:
    """The HTTP connections both listeners hold, counted together: the open-file limit is the process's."""

    def __init__(self) -> None:
        self.cap = int(DAEMON_DEFAULTS["http"]["maxConnections"])
        self.open = 0  # served by a live protocol
        # The listening sockets open now; each counts what it accepted whose protocol is not made yet.
        self.gates: set[GatedSocket] = set()
        self.refused = ThrottledWarning(log, "refused %d HTTP connection(s): %s")

    @property
    def pending(self) -> int:
        return sum(gate.pending for gate in self.gates)

    def size(self, configured: int) -> None:
        """Set the cap from the setting and the open-file limit now (a listener is opening)."""
        self.cap = cap_for(soft_limit(), configured)

    @property
    def full(self) -> bool:
        return self.open + self.pending >= self.cap

    def refuse(self, conn: socket.socket) -> None:
        """Answer 503 as far as the socket takes it at once, close it, and count it."""
        with contextlib.suppress(OSError):
            conn.setblocking(False)
            conn.send(REFUSED)
        conn.close()
        self.refused.note(f"{self.open + self.pending} open, the most this daemon holds")


# One per process, like the open-file limit it guards.
BUDGET = Budget()
# How many connections one accept may refuse before it lets the loop run other work.
REFUSE_BATCH = 256


class GatedSocket(socket.socket):
    """A listening socket whose accept refuses connections past the cap itself, synchronously: the
    loop's accept pass (asyncio's selector loops call this accept) sees only admitted ones."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Admitted connections whose protocol asyncio has not made yet: those of a listener that
        # closes first never get one, so the listener drops its count as it closes (`retire`).
        self.pending = 0
        BUDGET.gates.add(self)

    def accept(self) -> tuple[socket.socket, Any]:
        for _ in range(REFUSE_BATCH):
            conn, address = super().accept()  # BlockingIOError when none waits: the pass ends
            if not BUDGET.full:
                self.pending += 1
                return conn, address
            BUDGET.refuse(conn)
        raise BlockingIOError  # more may wait: the next pass takes them, after other work

    def retire(self) -> None:
        """The listener is closed: what it admitted and never served no longer counts."""
        self.pending = 0
        BUDGET.gates.discard(self)


class BoundedH11(H11Protocol):
    """One HTTP connection: uvicorn's h11 protocol with a deadline on the request's headers and on
    its body, counted in the budget while it lives. A listener serves a subclass carrying its bounds
    (`protocol`)."""

    bounds: ClassVar[Bounds]
    gate: ClassVar[GatedSocket | None]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._admitted = False
        self._waiting_for: str | None = None  # "headers", "body", or None: nothing bounded here
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if self.gate is not None and self.gate.pending:
            self.gate.pending -= 1  # the gate admitted it
        elif BUDGET.full:
            # A loop that accepts without the gate (Windows' proactor): refused here instead.
            BUDGET.refused.note(f"{BUDGET.open} open, the most this daemon holds")
            transport.write(REFUSED)
            transport.close()
            return
        BUDGET.open += 1
        self._admitted = True
        super().connection_made(transport)
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._admitted:
            return  # refused at the door: uvicorn never served it
        self._admitted = False
        BUDGET.open -= 1
        self._set_deadline(None)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def _awaited(self) -> str | None:
        """What the connection waits for from the client now, if that is bounded here."""
        if self.transport.is_closing():
            return None
        state = self.conn.their_state
        if state is h11.IDLE:
            # After an answer uvicorn's keep-alive timer runs until the next request's first byte.
            return None if self.timeout_keep_alive_task is not None else "headers"
        if state is h11.SEND_BODY:
            return "body"
        return None  # the request is in: the app's time, bounded by the app

    def _watch(self) -> None:
        awaited = self._awaited()
        if awaited != self._waiting_for:
            self._set_deadline(awaited)

    def _set_deadline(self, awaited: str | None) -> None:
        self._waiting_for = awaited
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if awaited is not None:
            seconds = self.bounds.header_seconds if awaited == "headers" else self.bounds.body_seconds
            self._deadline = self.loop.call_later(seconds, self._expire)

    def _expire(self) -> None:
        self._deadline = None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return
        log.debug("closed an HTTP connection: its request %s did not come in time", self._waiting_for)
        # abort, not close: nothing is owed to this client, and its file is freed at once.
        self.transport.abort()


def protocol(bounds: Bounds, gate: socket.socket) -> type[BoundedH11]:
    """The protocol class one listener passes to uvicorn (`http=`), carrying that listener's bounds
    and its listening socket (a GatedSocket, which admitted each connection it serves)."""
    BUDGET.size(bounds.max_connections)

    class Bounded(BoundedH11):
        pass

    Bounded.bounds = bounds
    Bounded.gate = gate if isinstance(gate, GatedSocket) else None
    return Bounded
