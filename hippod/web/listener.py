"""The HTTP listener inside the daemon: uvicorn serving the app on the daemon's own event loop,
opened by `serve` (or daemon.json `http.autostart`) and closed by `serve --stop` or at shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Iterator

import uvicorn

from hippoctl.protocol.replies_http import ServeReply
from hippod import clock
from hippod.errors import HippoError
from hippod.state import DaemonState
from hippod.web import app
from hippod.web.auth import Authenticator

log = logging.getLogger("hippod.web")

LOOPBACK_NAMES = ("127.0.0.1", "::1", "localhost")


class _InLoopServer(uvicorn.Server):
    """uvicorn's server without its signal handlers: the daemon owns SIGTERM and SIGINT."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, bound here so a taken port is our error, not uvicorn's exit."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise HippoError("usage", f"cannot resolve host {host!r}: {exc.strerror}") from None
    # localhost may resolve to both families; IPv4 first, as clients try it first.
    infos.sort(key=lambda info: info[0] != socket.AF_INET)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(1024)
    except OSError as exc:
        sock.close()
        raise HippoError("bad_state", f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.setblocking(False)
    return sock


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class HttpListener:
    """At most one listener per daemon."""

    def __init__(self, state: DaemonState) -> None:
        self.state = state
        self.server: _InLoopServer | None = None
        self.task: asyncio.Task[None] | None = None
        self.reply = ServeReply(running=False)
        # The project whose store requests without X-Hippo-Store reach (None: the global store).
        self.project: str | None = None

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    async def open(self, host: str, port: int, allow_remote: bool, project: str | None = None) -> ServeReply:
        """Listen on host:port; `project` is the project store (its .hippo folder) requests reach
        without X-Hippo-Store, None for the global store."""
        if host not in LOOPBACK_NAMES and not allow_remote:
            raise HippoError(
                "usage",
                f"refusing to listen on {host}: without --allow-remote only loopback "
                "(127.0.0.1, ::1, localhost)",
            )
        store = project or self.state.registry.global_root
        if (
            self.running
            and host == self.reply.host
            and port in (0, self.reply.port)
            and store == self.reply.store
        ):
            return self.reply  # what is asked is what already runs
        if self.running:
            raise HippoError(
                "bad_state",
                f"already serving on {self.reply.url}",
                hint="hippoctl serve --stop, then serve again",
            )
        sock = _bind(host, port)
        bound_port = sock.getsockname()[1]
        asgi = app.build(self.state, Authenticator(self.state.registry, allow_remote=allow_remote))
        config = uvicorn.Config(
            asgi,
            log_config=None,
            access_log=False,
            lifespan="off",
            server_header=False,
            timeout_graceful_shutdown=5,
        )
        self.server = _InLoopServer(config)
        self.task = asyncio.get_running_loop().create_task(self._serve(sock))
        self.reply = ServeReply(
            running=True,
            url=_url(host, bound_port),
            host=host,
            port=bound_port,
            allow_remote=allow_remote,
            started_at=clock.iso(clock.now()),
            store=store,
        )
        self.project = os.path.dirname(project) if project is not None else None
        log.info("HTTP API listening on %s%s", self.reply.url, " (remote allowed)" if allow_remote else "")
        return self.reply

    async def _serve(self, sock: socket.socket) -> None:
        assert self.server is not None
        try:
            await self.server.serve(sockets=[sock])
        except Exception:
            log.exception("the HTTP listener stopped")
        finally:
            sock.close()

    async def close(self) -> ServeReply:
        """Stop listening; requests in flight get a few seconds to finish."""
        was = self.reply
        if self.server is not None and self.task is not None:
            self.server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self.task), 10)
            if not self.task.done():
                self.task.cancel()
        self.server, self.task = None, None
        self.reply = ServeReply(running=False)
        if was.running:
            log.info("HTTP API on %s closed", was.url)
        return was
