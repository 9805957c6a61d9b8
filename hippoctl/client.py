"""Talking to the daemon: connect (spawning it when absent), handshake, one request, its replies."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

import msgspec

from hippoctl import __version__
from hippoctl.protocol import errors, instance, ownership
from hippoctl.protocol import messages as m
from hippoctl.protocol.framing import FrameError, pack, recv_frame
from hippoctl.protocol.paths import lock_path, log_file, socket_path
from hippoctl.protocol.transport import Connection, open_local
from hippoctl.protocol.version import PROTOCOL

CONNECT_TIMEOUT = 0.25
HELLO_TIMEOUT = 2.0
SPAWN_WAIT = 5.0
BACKOFF = (0.05, 0.1, 0.2, 0.4, 0.8)
CANCEL_WAIT = 2.0

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(m.DaemonMessage).decode


class ClientError(Exception):
    """The request could not be completed; carries the exit code to leave with."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def unreachable(message: str) -> ClientError:
    return ClientError(message, errors.UNREACHABLE)


class Refused(ClientError):
    """The socket, or the process on it, is not this user's: nothing was sent."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message, errors.UNREACHABLE)
        self.reason = reason


def _refused(path: str, reason: str) -> Refused:
    return Refused(f"refusing to talk to hippod on {path}: {reason}", reason)


def _connect_once(path: str) -> Connection | None:
    """A connection to `path`, or None when nothing accepts there.

    Nothing is sent yet: the socket's folders must be this user's, and so must the process that
    accepted, or the call is refused (ClientError) rather than retried.
    """
    if sys.platform == "win32":
        from hippoctl.protocol import winpipe

        try:
            return winpipe.connect_checked(path, CONNECT_TIMEOUT)
        except winpipe.NotThisUsers as exc:
            raise _refused(path, str(exc)) from None
        except OSError as exc:
            raise unreachable(f"cannot reach hippod on {path}: {exc.strerror or exc}") from None
    try:
        ownership.check_folder(os.path.dirname(path))
    except FileNotFoundError:
        return None
    except ownership.NotOurs as exc:
        raise _refused(path, str(exc)) from None
    except OSError as exc:  # a folder on the way this user may not look into, a loop, ...
        where = exc.filename or os.path.dirname(path)
        raise unreachable(f"cannot reach hippod on {path}: {where}: {exc.strerror or exc}") from None
    sock = open_local(path, CONNECT_TIMEOUT)
    if not isinstance(sock, socket.socket):
        return None
    try:
        uid = ownership.peer_uid(sock)
    except OSError:
        sock.close()
        return None
    if uid is not None and uid != os.getuid():
        sock.close()
        mine = ownership.owner_name(os.getuid())
        raise _refused(path, f"it is served by {ownership.owner_name(uid)}, not by {mine}")
    return sock


def remaining(deadline: float | None, cap: float | None) -> float | None:
    """Seconds left before `deadline` (monotonic), at most `cap`; raises once the deadline has passed."""
    if deadline is None:
        return cap
    left = deadline - time.monotonic()
    if left <= 0:
        raise unreachable("no reply from hippod within the time allowed")
    return left if cap is None else min(cap, left)


def _home_root() -> str:
    """The home (global root) this client's requests are for: its daemon holds the home's lock."""
    from hippoctl.protocol.spool import global_root

    return global_root()


def _connect_home(path: str) -> Connection | None:
    """A connection to the daemon of this home when it serves another socket than `path` (it was
    started with another XDG_RUNTIME_DIR or HIPPO_SOCKET), as the record in the home names it.

    That socket gets the same checks as ours; one that is not this user's is refused, naming the
    daemon. None when no daemon holds the home, or it serves `path`.
    """
    home = _home_root()
    running = instance.running(home)
    if running is None or running.socket == path:
        return None
    try:
        return _connect_once(running.socket)
    except Refused as exc:
        raise Refused(
            f"hippod (pid {running.pid}) serves {home} on {running.socket}; refusing to talk to it: "
            f"{exc.reason}",
            exc.reason,
        ) from None


def daemon_running(path: str) -> bool:
    """Whether a live daemon holds the lock of this socket or of this home (released last in a
    shutdown, after every store is checkpointed and closed)."""
    return daemon_holds_lock(path) or instance.lock_held(instance.lock_path(_home_root()))


def _not_accepting(path: str) -> str:
    home = _home_root()
    running = instance.running(home)
    if running is not None and running.socket != path:
        return f"hippod (pid {running.pid}) serves {home} on {running.socket} but does not accept connections"
    return f"hippod holds its lock but does not accept connections on {path}"


def connect(*, spawn: bool, deadline: float | None = None, patience: float = SPAWN_WAIT) -> Connection:
    """A connected socket to the daemon, starting it (bounded backoff, 5 s) when allowed.

    The daemon of this home may serve another socket than the one this client computes: its
    record in the home names it (hippoctl/protocol/instance.py). A daemon that holds its lock but
    does not accept yet (its backlog full, or not listening yet, one this call spawned included)
    is waited for, up to `patience` seconds; it is never taken for a dead one. With a `deadline`
    (monotonic), every wait stops there too.
    """
    path = socket_path()
    until = time.monotonic() + patience
    if deadline is not None:
        until = min(until, deadline)
    attempt = 0
    while True:
        sock = _connect_once(path) or _connect_home(path)
        if sock is not None:
            return sock
        if not daemon_running(path):
            break
        if time.monotonic() >= until:
            raise unreachable(_not_accepting(path))
        time.sleep(max(0.0, min(BACKOFF[min(attempt, len(BACKOFF) - 1)], until - time.monotonic())))
        attempt += 1
    if not spawn:
        raise unreachable(f"hippod is not running (no answer on {path})")
    from hippoctl import spawn as spawner

    spawn_at = spawner.start_daemon(deadline)
    spawned = time.monotonic()
    wait_until = spawned + SPAWN_WAIT
    # A daemon that has taken its lock is starting, not failing (a loaded machine can take more
    # than 5 s to load it): like a running one that is slow to accept, it gets `patience`, for as
    # long as it holds the lock.
    starting_until = spawned + max(SPAWN_WAIT, patience)
    if deadline is not None:
        wait_until = min(wait_until, deadline)
        starting_until = min(starting_until, deadline)
    loading = False
    attempt = 0
    while True:
        time.sleep(max(0.0, min(BACKOFF[min(attempt, len(BACKOFF) - 1)], wait_until - time.monotonic())))
        attempt += 1
        # A daemon of this home that another client started on its socket meanwhile serves us too.
        sock = _connect_once(path) or _connect_home(path)
        if sock is not None:
            return sock
        if spawn_at is not None and time.monotonic() >= spawn_at:
            # The service manager took the request but no daemon answers yet: spawn one as well.
            spawner.spawn_daemon()
            spawn_at = None
        if not loading and time.monotonic() < wait_until:
            continue
        if time.monotonic() < starting_until and daemon_running(path):
            loading, wait_until = True, starting_until
            continue
        log = log_file()
        if loading and time.monotonic() < starting_until:
            raise unreachable(f"hippod exited while starting; see {log}")
        if deadline is not None and wait_until == deadline:
            raise unreachable("hippod did not start within the time allowed")
        raise unreachable(f"hippod did not start within {wait_until - spawned:g} s; see {log}")


class Silent(ClientError):
    """No frame arrived from the daemon within the wait."""


def _recv(sock: Connection, timeout: float | None) -> m.Message:
    sock.settimeout(timeout)
    try:
        raw = recv_frame(sock)
    except TimeoutError:
        raise Silent("hippod stopped answering", errors.UNREACHABLE) from None
    except FrameError as exc:
        raise ClientError(f"bad frame from hippod: {exc}", errors.MISMATCH) from None
    except OSError:
        raise unreachable("connection to hippod lost") from None
    if raw is None:
        raise unreachable("connection to hippod lost before it replied")
    try:
        return _decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise ClientError("hippod sent a message this hippoctl cannot read", errors.MISMATCH) from None


def _home() -> str:
    value = os.environ.get("HIPPO_HOME", "").strip()
    return os.path.expanduser(value) if value else ""


def _hello_frame() -> bytes:
    hello = m.Hello(protocol=PROTOCOL, client_version=__version__, pid=os.getpid(), home=_home())
    return pack(_encode(hello))


def _expect_welcome(reply: m.Message) -> None:
    if isinstance(reply, m.Error):
        raise ClientError(reply.message, reply.exit_code or errors.exit_code_for(reply.code))
    if not isinstance(reply, m.Welcome):
        raise ClientError("hippod did not answer Hello with Welcome", errors.MISMATCH)


def request_envelope(body: m.Body, *, cwd: str, global_store: bool) -> m.Request:
    """A Request carrying the per-request environment (memory-model.md §5)."""
    env = {k: os.environ[k] for k in m.REQUEST_ENV if os.environ.get(k)}
    return m.Request(
        id=1,
        cwd=cwd,
        body=body,  # type: ignore[arg-type]
        env=env,
        tenant=env.get("HIPPO_TENANT"),
        session=env.get("HIPPO_SESSION_ID"),
        global_store=global_store,
    )


def call(
    request: m.Request,
    *,
    spawn: bool,
    timeout: float,
    on_progress: Callable[[m.Progress], None] | None = None,
    deadline: float | None = None,
    settle: bool = True,
) -> m.Result | m.Error:
    """Send one request and return its final Result or Error.

    With a `deadline` (time.monotonic()), connecting, spawning and every wait for a reply stop
    there (hook verbs' wall budget, daemon.md §10.5); `timeout` then bounds each wait as well.
    With `settle`, it returns once the daemon closes the connection, which it does when the
    bookkeeping the reply left is committed (a recall's strengthening): what the next command reads
    includes it. Hooks do not wait for that.
    """
    try:
        frame = pack(_encode(request))
    except FrameError as exc:
        raise ClientError(str(exc), errors.FAILED) from None
    sock = connect(spawn=spawn, deadline=deadline, patience=timeout)
    try:
        # Hello and the request leave together, saving a round trip on every call: the daemon
        # reads them in order, and a refused Hello just leaves the request unread.
        try:
            if deadline is not None:
                # A daemon that stops reading must not hold a hook past its budget either.
                sock.settimeout(remaining(deadline, None))
            sock.sendall(_hello_frame() + frame)
        except OSError:
            # The daemon may have refused the frame (e.g. frame_too_large) and closed before reading it all.
            refusal = _refusal(sock, deadline)
            if refusal is not None:
                return refusal
            raise unreachable("connection to hippod lost") from None
        _expect_welcome(_welcome(sock, deadline, timeout))
        try:
            while True:
                reply = _recv(sock, remaining(deadline, timeout))
                if isinstance(reply, m.Progress):
                    if on_progress is not None and reply.line:
                        on_progress(reply)
                    continue
                if isinstance(reply, m.Result | m.Error):
                    if settle:
                        _until_closed(sock, remaining(deadline, timeout))
                    return reply
        except KeyboardInterrupt:
            _cancel(sock, request.id)
            raise
    finally:
        sock.close()


def _until_closed(sock: Connection, timeout: float | None) -> None:
    """Read until the daemon closes the connection (or `timeout`); the reply is in hand either way."""
    with contextlib.suppress(OSError):
        sock.settimeout(timeout)
        while sock.recv(4096):
            pass


def _welcome(sock: Connection, deadline: float | None, timeout: float) -> m.Message:
    """The daemon's answer to Hello: due within 2 s, but a daemon that holds its lock is busy, not
    gone, and gets the rest of the request's time. So is one that takes its lock within SPAWN_WAIT:
    a socket the service manager holds accepts the connection before the daemon it starts is up."""
    try:
        return _recv(sock, remaining(deadline, HELLO_TIMEOUT))
    except Silent:
        if timeout <= HELLO_TIMEOUT or not _lock_taken(remaining(deadline, SPAWN_WAIT)):
            raise
    return _recv(sock, remaining(deadline, timeout - HELLO_TIMEOUT))


def _lock_taken(within: float | None) -> bool:
    """Whether a daemon holds its lock now or takes it within `within` seconds."""
    until = time.monotonic() + (within or 0.0)
    while True:
        if daemon_running(socket_path()):
            return True
        if time.monotonic() >= until:
            return False
        time.sleep(0.05)


def _refusal(sock: Connection, deadline: float | None) -> m.Error | None:
    """An Error the daemon sent before closing the connection under a request, if there is one."""
    try:
        reply = _recv(sock, remaining(deadline, HELLO_TIMEOUT))
        if isinstance(reply, m.Welcome):
            reply = _recv(sock, remaining(deadline, HELLO_TIMEOUT))
    except ClientError:
        return None
    return reply if isinstance(reply, m.Error) else None


def _cancel(sock: Connection, request_id: int) -> None:
    """Ask the daemon to cancel, and wait briefly for it to say so."""
    try:
        sock.sendall(pack(_encode(m.Cancel(id=request_id))))
        deadline = time.monotonic() + CANCEL_WAIT
        while time.monotonic() < deadline:
            reply = _recv(sock, max(0.01, deadline - time.monotonic()))
            if isinstance(reply, m.Result | m.Error):
                return
    except (ClientError, OSError):
        return


def ping(*, spawn: bool = False, timeout: float = 5.0) -> dict[str, Any] | None:
    """The daemon's Ping reply as a dict, or None when it is not running. A daemon that holds its
    lock but does not answer yet (starting) is waited for up to `timeout` seconds."""
    try:
        result = call(
            request_envelope(m.Ping(), cwd=os.getcwd(), global_store=False), spawn=spawn, timeout=timeout
        )
    except ClientError as exc:
        # Someone else's socket is not "no daemon": starting ours would not help, so say why.
        if exc.exit_code == errors.UNREACHABLE and not isinstance(exc, Refused):
            return None
        raise
    if isinstance(result, m.Result) and isinstance(result.data, dict):
        return result.data
    return None


def daemon_holds_lock(sock_path: str) -> bool:
    """Whether a live daemon holds the lock next to this socket (`<socket>.lock`)."""
    return instance.lock_held(lock_path(sock_path))
