"""One ASGI app served by uvicorn on the daemon's own event loop, on a socket bound here: what the
HTTP API's listener and the dashboard's listener each run."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from hippod.base.errors import HippoError
from hippod.base.log_throttle import RepeatFilter
from hippod.web.connections import Bounds, GatedSocket, protocol

log = logging.getLogger("hippod.web")

# What uvicorn logs for each request a client can send at will (junk bytes, an upgrade it cannot
# serve): a line each would let any client rotate the useful log away, so once a minute at most.
logging.getLogger("uvicorn.error").addFilter(
    RepeatFilter(
        frozenset(
            {
                "Invalid HTTP request received.",
                "Unsupported upgrade request.",
                "No supported WebSocket library detected. Please use \"pip install 'uvicorn[standard]'\", "
                "or install 'websockets' or 'wsproto' manually.",
            }
        )
    )
)

# A graceful close lets requests in flight finish for this long, then the task is cancelled.
CLOSE_SECONDS = 10
# Of which uvicorn waits this long for requests in flight before it cancels them.
GRACEFUL_SECONDS = 5


class _InLoopServer(uvicorn.Server):
    """uvicorn's server without its signal handlers: the daemon owns SIGTERM and SIGINT."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


Address = tuple[int, int, int, str, tuple[Any, ...]]


async def resolve(host: str, port: int) -> Address:
    """The address to listen on for host:port, looked up on the loop's resolver (a host name must
    not stall the daemon); IPv4 first when localhost gives both, as clients try it first."""
    try:
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise HippoError("usage", f"cannot resolve host {host!r}: {exc.strerror}") from None
    infos.sort(key=lambda info: info[0] != socket.AF_INET)
    return infos[0]


def bind(host: str, port: int, found: Address) -> socket.socket:
    """A listening socket at `found` (resolved from host:port), bound here so a taken port is our
    error, not uvicorn's exit. Synchronous: whoever checked that nothing listens yet binds at once."""
    family, kind, proto, _, address = found
    sock = GatedSocket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(1024)
    except OSError as exc:
        sock.retire()
        sock.close()
        raise HippoError("bad_state", f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.setblocking(False)
    return sock


def url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class AsgiServer:
    """uvicorn serving one app on one bound socket, as a task of the daemon's loop, until closed;
    each connection within `bounds` (hippod/web/connections.py)."""

    def __init__(self, app: ASGIApp, sock: socket.socket, what: str, bounds: Bounds) -> None:
        config = uvicorn.Config(
            app,
            http=protocol(bounds, sock),
            log_config=None,
            access_log=False,
            lifespan="off",
            server_header=False,
            timeout_keep_alive=bounds.keep_alive_whole_seconds,
            timeout_graceful_shutdown=GRACEFUL_SECONDS,
        )
        self.what = what
        self.server = _InLoopServer(config)
        self.task = asyncio.get_running_loop().create_task(self._serve(sock))

    @property
    def running(self) -> bool:
        return not self.task.done()

    async def _serve(self, sock: socket.socket) -> None:
        try:
            await self.server.serve(sockets=[sock])
        except Exception:
            log.exception("the %s listener stopped", self.what)
        finally:
            if isinstance(sock, GatedSocket):
                sock.retire()
            sock.close()

    async def close(self, within: float | None = None) -> None:
        """Stop listening; requests in flight get a few seconds to finish (no more than `within`: a
        stopping daemon's grace left)."""
        seconds = float(CLOSE_SECONDS)
        if within is not None:
            # uvicorn reads its graceful timeout when it shuts down, which is about to happen.
            self.server.config.timeout_graceful_shutdown = int(min(GRACEFUL_SECONDS, within))
            seconds = min(seconds, within + 1.0)
        self.server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(self.task), seconds)
        if not self.task.done():
            self.task.cancel()
