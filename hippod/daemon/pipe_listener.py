"""The daemon's named pipe on Windows: instances made with this user's DACL, served as asyncio streams.

asyncio's own `start_serving_pipe` takes no security attributes and no remote-client flag, so the
instances are made here (CreateNamedPipeW through ctypes) and handed to the proactor the way it
hands its own: `accept_pipe` waits for a client, `_make_duplex_pipe_transport` wraps the handle.
The handler then gets the StreamReader/StreamWriter pair a Unix socket gives, so everything above
the transport is one code path. One instance always waits for the next client while the others
serve, so a client finds the pipe busy only for the moment between two accepts.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import sys
import time
from asyncio import windows_utils
from collections.abc import Awaitable, Callable
from ctypes import wintypes
from typing import Any

from hippoctl.protocol import winpipe, winsec

# Windows only: mypy checks what follows with --platform win32 (.ci/run).
assert sys.platform == "win32", "hippod.daemon.pipe_listener is for Windows only"

log = logging.getLogger("hippod.pipe")

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

_PIPE_ACCESS_DUPLEX = 0x00000003
_FILE_FLAG_OVERLAPPED = 0x40000000
_FILE_FLAG_FIRST_PIPE_INSTANCE = 0x00080000
_PIPE_TYPE_BYTE = 0x0
_PIPE_READMODE_BYTE = 0x0
_PIPE_WAIT = 0x0
_PIPE_REJECT_REMOTE_CLIENTS = 0x00000008
_PIPE_UNLIMITED_INSTANCES = 255
_BUFFER = 64 * 1024
_INVALID_HANDLE = wintypes.HANDLE(-1).value
_ERROR_ACCESS_DENIED = 5
# How long a name still held after the previous daemon stopped is waited for.
TAKEN_WAIT = 3.0

_kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
_kernel32.CreateNamedPipeW.restype = wintypes.HANDLE
_kernel32.CreateNamedPipeW.argtypes = [
    wintypes.LPCWSTR,
    wintypes.DWORD,
    wintypes.DWORD,
    wintypes.DWORD,
    wintypes.DWORD,
    wintypes.DWORD,
    wintypes.DWORD,
    ctypes.c_void_p,
]


class PipeTaken(Exception):
    """Another process already serves a pipe of this name: the daemon does not start."""


class PipeListener:
    """Serves `name` until closed: each client's connection goes to `handler` as a stream pair."""

    def __init__(self, name: str, handler: Handler) -> None:
        self.name = name
        self.handler = handler
        self.security = winsec.security_attributes(winsec.owner_only_sddl(winsec.current_sid()))
        self.waiting: windows_utils.PipeHandle | None = None
        self.task: asyncio.Task[None] | None = None
        self.accepting: asyncio.Future[Any] | None = None
        self.closed = False
        self.connections: set[asyncio.Task[Any]] = set()

    def _instance(self, first: bool) -> windows_utils.PipeHandle:
        """A new instance of the pipe; the first one fails when the name is anyone else's."""
        mode = _PIPE_ACCESS_DUPLEX | _FILE_FLAG_OVERLAPPED
        if first:
            mode |= _FILE_FLAG_FIRST_PIPE_INSTANCE
        kind = _PIPE_TYPE_BYTE | _PIPE_READMODE_BYTE | _PIPE_WAIT | _PIPE_REJECT_REMOTE_CLIENTS
        handle = _kernel32.CreateNamedPipeW(
            self.name, mode, kind, _PIPE_UNLIMITED_INSTANCES, _BUFFER, _BUFFER, 0, ctypes.byref(self.security)
        )
        if handle is None or handle == _INVALID_HANDLE:
            code = ctypes.get_last_error()
            if first and code == _ERROR_ACCESS_DENIED:
                raise PipeTaken(f"another process already serves the pipe {self.name}")
            raise ctypes.WinError(code)
        return windows_utils.PipeHandle(handle)

    async def start(self) -> None:
        """Make the first instance and begin accepting. Raises PipeTaken when the name is held.

        FILE_FLAG_FIRST_PIPE_INSTANCE refuses a name another process made first; the name is also
        looked up beforehand, for the systems that do not enforce the flag (Wine). A name still
        held a moment after a daemon stopped (a client had not yet closed its end) is waited for.
        """
        deadline = time.monotonic() + TAKEN_WAIT
        while winpipe.name_taken(self.name):
            if time.monotonic() >= deadline:
                raise PipeTaken(f"another process already serves the pipe {self.name}")
            await asyncio.sleep(0.1)
        self.waiting = self._instance(first=True)
        self.task = asyncio.get_running_loop().create_task(self._accept())
        self.task.add_done_callback(_report)

    async def _successor(self) -> windows_utils.PipeHandle | None:
        """The next instance, made before the current one is handed out or closed, so the name is
        never without one. A failure (no handles left) is logged and tried again every second."""
        while not self.closed:
            try:
                return self._instance(first=False)
            except OSError as exc:
                log.error("cannot make another instance of the pipe %s: %s", self.name, exc)
                await asyncio.sleep(1.0)
        return None

    async def _accept(self) -> None:
        loop: Any = asyncio.get_running_loop()
        while self.waiting is not None and not self.closed:
            pipe = self.waiting
            try:
                # The proactor's own pipe server does the same with the instances it makes.
                self.accepting = loop._proactor.accept_pipe(pipe)
                await self.accepting
            except asyncio.CancelledError:
                raise
            except OSError as exc:
                # A client that left before it was accepted: this instance is spent.
                log.debug("pipe accept failed: %s", exc)
                self.waiting = await self._successor()
                pipe.close()
                await asyncio.sleep(0)
                continue
            finally:
                self.accepting = None
            self.waiting = await self._successor()
            self._serve(loop, pipe)

    def _serve(self, loop: Any, pipe: windows_utils.PipeHandle) -> None:
        reader = asyncio.StreamReader(loop=loop)
        protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
        transport = loop._make_duplex_pipe_transport(pipe, protocol)
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        task = loop.create_task(self.handler(reader, writer))
        self.connections.add(task)
        task.add_done_callback(self.connections.discard)

    def close(self) -> None:
        """Stop accepting: the wait for a client is cancelled before the waiting instance goes;
        connections being served finish."""
        self.closed = True
        if self.accepting is not None:
            self.accepting.cancel()
        pipe, self.waiting = self.waiting, None
        if pipe is not None:
            pipe.close()
        if self.task is not None:
            self.task.cancel()


def _report(task: asyncio.Task[None]) -> None:
    """An accept loop that ended on an error says so: the daemon would otherwise accept no more."""
    if not task.cancelled() and task.exception() is not None:
        log.error("the pipe stopped accepting connections", exc_info=task.exception())


async def start_pipe_server(name: str, handler: Handler) -> PipeListener:
    """Serve `name` with `handler`; raises PipeTaken when another process holds the name."""
    if not hasattr(asyncio.get_running_loop(), "_proactor"):
        raise RuntimeError("the named pipe needs asyncio's proactor event loop")
    listener = PipeListener(name, handler)
    await listener.start()
    return listener
