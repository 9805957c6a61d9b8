"""The socket server: handshake, one request per connection, replies, cancel, and the error paths."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol.errors import exit_code_for
from hippoctl.protocol.framing import FrameError, pack, read_frame
from hippoctl.protocol.ownership import peer_uid
from hippoctl.protocol.paths import home_override
from hippoctl.protocol.version import MIN_PROTOCOL, PROTOCOL, spoken
from hippod import __version__
from hippod.base.errors import HippoError, log_failure
from hippod.calls.request import RequestContext
from hippod.daemon.dispatch import dispatch
from hippod.daemon.heartbeat import Heartbeat, is_job
from hippod.daemon.state import DaemonState
from hippod.store.roots import default_root
from hippod.store.sqlite.db import COMMIT_POINT, CommitPoint

log = logging.getLogger("hippod.server")

HELLO_TIMEOUT = 2.0
FROZEN = (m.Ping, m.DaemonStatus, m.Shutdown)
IDLE_TIMEOUT = 30.0

_decode_client = msgspec.msgpack.Decoder(m.ClientMessage).decode
_encode = msgspec.msgpack.Encoder().encode


class _BodyProbe(msgspec.Struct):
    t: str = ""


class _RequestProbe(msgspec.Struct):
    t: str = ""
    id: int | None = None
    body: _BodyProbe | None = None


def _error(request_id: int | None, code: str, message: str, hint: str | None = None) -> m.Error:
    return m.Error(id=request_id, code=code, message=message, hint=hint, exit_code=exit_code_for(code))


def _classify_undecodable(raw: bytes) -> m.Error:
    """Tell an unknown request type (a newer client) from a frame that is simply broken."""
    try:
        probe = msgspec.msgpack.decode(raw, type=_RequestProbe)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _error(None, "bad_frame", "frame is not a valid message")
    if probe.t == "Request" and probe.body is not None and probe.body.t not in m.BODY_TAGS:
        return _error(
            probe.id,
            "unsupported_request",
            f"this hippod ({__version__}) does not know the request {probe.body.t!r}",
            hint="hippoctl daemon restart",
        )
    return _error(probe.id, "bad_frame", "frame is not a valid message")


@functools.lru_cache(maxsize=64)
def _realpath(path: str) -> str:
    return os.path.realpath(path) if path else ""


class Server:
    """Serves connections; tracks in-flight requests so shutdown can let them finish."""

    def __init__(self, state: DaemonState, max_frame: int) -> None:
        self.state = state
        self.max_frame = max_frame
        self.stopping = False
        self.inflight: set[asyncio.Task[Any]] = set()
        self.home = home_override() or ""  # read once: the daemon's environment does not change
        self.default_home = default_root()

    async def _send(self, writer: asyncio.StreamWriter, message: m.Message) -> None:
        writer.write(pack(_encode(message), self.max_frame))
        await writer.drain()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection: Hello/Welcome, one Request, its reply, close."""
        self.state.connections += 1
        try:
            if sys.platform != "win32":
                # A pipe has no peer uid: its DACL admits this user and SYSTEM alone.
                sock = writer.get_extra_info("socket")
                uid = None if sock is None else peer_uid(sock)
                if uid is not None and uid != os.getuid():
                    log.warning("dropped a connection from uid %s", uid)
                    return
            await self._converse(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception as exc:
            log_failure("connection", exc)
        finally:
            self.state.connections -= 1
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _read(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout: float) -> Any:
        """Read and decode one client frame; answers framing errors itself and returns None."""
        try:
            # A timeout scope, not wait_for: that would run the read as a task of its own.
            async with asyncio.timeout(timeout):
                raw = await read_frame(reader, self.max_frame)
        except TimeoutError:
            return None
        except FrameError as exc:
            await self._send(writer, _error(None, exc.code, str(exc)))
            return None
        if raw is None:
            return None
        try:
            return _decode_client(raw)
        except (msgspec.DecodeError, msgspec.ValidationError):
            await self._send(writer, _classify_undecodable(raw))
            return None

    async def _converse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hello = await self._read(reader, writer, HELLO_TIMEOUT)
        if hello is None:
            return
        if not isinstance(hello, m.Hello):
            await self._send(writer, _error(None, "bad_frame", "the first frame must be Hello"))
            return
        # Outside our protocol range only the frozen requests are served (daemon.md §7.3), so that
        # `version` and `daemon status|stop|restart` work between any client and daemon.
        in_range = MIN_PROTOCOL <= hello.protocol <= PROTOCOL
        ours = self.home
        # A home no path can hold (a NUL byte) is not this daemon's either. An empty home stands for
        # the default one: a client naming the default folder explicitly is at the same home.
        default = self.default_home
        if "\x00" in hello.home or (_realpath(hello.home) or default) != (ours or default):
            await self._send(
                writer,
                _error(None, "home_mismatch", f"this hippod serves HIPPO_HOME={ours or '(default)'}"),
            )
            return
        await self._send(
            writer,
            m.Welcome(
                protocol=hello.protocol if in_range else PROTOCOL,
                daemon_version=__version__,
                pid=self.state.pid,
                started_at=self.state.started_at,
                home=self.state.registry.global_root,
            ),
        )
        request = await self._read(reader, writer, IDLE_TIMEOUT)
        if request is None:
            return
        if not isinstance(request, m.Request):
            if not isinstance(request, m.Cancel):
                await self._send(writer, _error(None, "bad_frame", "expected a Request after Hello"))
            return
        if not in_range and not isinstance(request.body, FROZEN):
            message = (
                f"hippod {__version__} speaks {spoken(MIN_PROTOCOL, PROTOCOL)}; "
                f"this hippoctl speaks protocol {hello.protocol}. Run: hippoctl daemon restart"
            )
            await self._send(writer, _error(request.id, "protocol_mismatch", message))
            return
        if self.stopping:
            await self._send(writer, _error(request.id, "shutting_down", "hippod is shutting down"))
            return
        started = time.perf_counter()
        reply = await self._run(request, reader, writer)
        try:
            await self._send(writer, reply)
        except FrameError:
            limit = self.max_frame
            message = f"the reply is over the {limit}-byte frame limit; ask for less (--budget, --limit)"
            await self._send(writer, _error(request.id, "frame_too_large", message))
        if log.isEnabledFor(logging.DEBUG):
            # What bench/recall_floor.py reads as a request's time in the daemon (decoded to sent).
            took = (time.perf_counter() - started) * 1e3
            log.debug("served %s in %.3f ms", type(request.body).__name__, took)
        # The connection closes once the bookkeeping the reply left (recall's strengthening) is in:
        # a client that waits for the close has its effects committed, a hook that does not is free.
        await self.state.registry.settled()

    async def _run(
        self, request: m.Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> m.Message:
        """Run a request; the client of a job hears from it at least every second meanwhile."""

        async def progress(line: str, stream: str, done: int | None, total: int | None) -> None:
            # The request goes on when its client has left (daemon.md §4.4).
            frame = m.Progress(id=request.id, line=line, stream=stream, done=done, total=total)
            heartbeat.sent()
            with contextlib.suppress(ConnectionError, FrameError):
                await self._send(writer, frame)

        heartbeat = Heartbeat(lambda: progress("", "err", None, None))
        if not is_job(request.body):
            return await self._serve(request, reader, progress)
        async with heartbeat.running():
            return await self._serve(request, reader, progress)

    async def _serve(
        self,
        request: m.Request,
        reader: asyncio.StreamReader,
        progress: Callable[[str, str, int | None, int | None], Awaitable[None]],
    ) -> m.Message:
        """Run a request, cancelling it when the client sends Cancel for it."""
        ctx = RequestContext(request, self.state, progress=progress)
        point = CommitPoint()
        context = contextvars.copy_context()
        context.run(COMMIT_POINT.set, point)
        task = asyncio.get_running_loop().create_task(dispatch(ctx), context=context)
        self.inflight.add(task)
        task.add_done_callback(self.inflight.discard)
        watcher = asyncio.get_running_loop().create_task(read_frame(reader, self.max_frame))
        try:
            await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if watcher.done() and not task.done() and not watcher.cancelled() and watcher.exception() is None:
                frame = watcher.result()
                # A client that just disconnects does not cancel: its write still lands. Nor does
                # a Cancel that comes after the commit point: the request then finishes.
                if frame is not None and _is_cancel(frame, request.id) and not point.reached:
                    task.cancel()
            try:
                data, text = await task
            except asyncio.CancelledError:
                if self.state.shutdown.is_set() or task.cancelled():
                    return _error(request.id, "cancelled", "request cancelled before its commit point")
                raise
            except HippoError as exc:
                return m.Error(
                    id=request.id,
                    code=exc.code,
                    message=exc.message,
                    hint=exc.hint,
                    details=exc.details,
                    exit_code=exc.exit_code,
                )
            except Exception as exc:
                log_failure(f"{type(request.body).__name__} request", exc)
                return _error(request.id, "internal", "internal error in hippod; see its log")
            notice = [self.state.config_notice] if self.state.config_notice else []
            warnings = notice + ctx.warnings
            return m.Result(id=request.id, text=text, data=data, warnings=warnings, exit_code=ctx.exit_code)
        finally:
            watcher.cancel()
            with contextlib.suppress(BaseException):
                await watcher


def _is_cancel(frame: bytes, request_id: int) -> bool:
    try:
        message = _decode_client(frame)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    return isinstance(message, m.Cancel) and message.id == request_id
