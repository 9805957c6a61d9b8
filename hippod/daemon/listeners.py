"""Where the daemon listens for its clients: a Unix socket (bound, or passed by systemd) or, on
Windows, a named pipe; and how it hears that it should stop (signals, or Ctrl-C and Ctrl-Break).

Either way the connection handler gets an asyncio stream pair, so the server above is one code path.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from hippod.daemon import instance
from hippod.daemon.state import DaemonState

log = logging.getLogger("hippod.app")

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

LISTEN_FD = 3
# Connections the kernel queues before the loop accepts them (it caps this at net.core.somaxconn):
# hundreds of hooks can connect in the same instant, and one past the queue would be refused.
BACKLOG = 4096
LISTEN_VARS = ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")


class ListenError(Exception):
    """The daemon cannot listen where its clients look for it; the message names why."""


class Listener:
    """What the daemon serves on: `close` stops accepting, `remove` takes away what it bound."""

    def __init__(self, server: Any, path: str, bound: tuple[int, int] | None) -> None:
        self.server = server
        self.path = path
        self.bound = bound

    def close(self) -> None:
        self.server.close()

    def remove(self) -> None:
        """Unlink our own socket file, and only it: systemd may have bound the path since (socket
        activation enabled while this daemon ran), and its socket must outlive this process."""
        if self.bound is not None and _identity(self.path) == self.bound:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)


async def listen(state: DaemonState, handler: Handler) -> Listener:
    """Start serving `handler` where this daemon's clients connect. Raises ListenError."""
    if sys.platform == "win32":
        from hippod.daemon.pipe_listener import PipeTaken, start_pipe_server

        try:
            return Listener(await start_pipe_server(state.socket, handler), state.socket, None)
        except PipeTaken as exc:
            raise ListenError(f"{exc}; refusing to start") from None
        except OSError as exc:
            raise ListenError(f"cannot serve the pipe {state.socket}: {exc.strerror or exc}") from None
    adopted = systemd_socket()
    state.socket_activated = adopted is not None
    if adopted is not None:
        _adopt(state, adopted)
        return Listener(await asyncio.start_unix_server(handler, sock=adopted), state.socket, None)
    with contextlib.suppress(FileNotFoundError):
        # The lock proves no live daemon owns this path, so a leftover file is stale.
        os.unlink(state.socket)
    server = await asyncio.start_unix_server(handler, path=state.socket, backlog=BACKLOG)
    os.chmod(state.socket, 0o600)
    return Listener(server, state.socket, _identity(state.socket))


def watch_signals(loop: asyncio.AbstractEventLoop, on_signal: Callable[[], None]) -> None:
    """Call `on_signal` in the loop on SIGTERM and SIGINT; on Windows, where an event loop cannot
    watch signals, on Ctrl-C and Ctrl-Break of a console daemon (`daemon stop` asks over the pipe)."""
    if sys.platform != "win32":
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, on_signal)
        return
    for sig in (signal.SIGINT, signal.SIGBREAK):
        signal.signal(sig, lambda _n, _f: loop.call_soon_threadsafe(on_signal))


def systemd_socket() -> socket.socket | None:
    """The listening socket systemd passed us (LISTEN_PID/LISTEN_FDS, fd 3), if any."""
    if sys.platform == "win32":
        return None
    if os.environ.get("LISTEN_PID") != str(os.getpid()) or os.environ.get("LISTEN_FDS") != "1":
        return None
    # The passed socket is this process's alone: a child (git, an agent's hook) must not see it.
    for name in LISTEN_VARS:
        os.environ.pop(name, None)
    try:
        sock = socket.socket(fileno=LISTEN_FD)
    except OSError:
        log.warning("LISTEN_FDS=1 but fd %d is not a socket; binding the socket path instead", LISTEN_FD)
        return None
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
        log.warning("the socket passed as fd %d is not a Unix stream socket; binding instead", LISTEN_FD)
        sock.detach()
        return None
    os.set_inheritable(LISTEN_FD, False)
    if not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
        sock.listen(BACKLOG)
    return sock


def _adopt(state: DaemonState, sock: socket.socket) -> None:
    """Status and logs name the socket systemd passed, which is where clients must connect."""
    name = sock.getsockname()
    if isinstance(name, str) and name and name != state.socket:
        log.warning("systemd passed socket %s, but clients of this home connect to %s", name, state.socket)
        state.socket = name
        instance.moved(state.registry.global_root, name)


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
