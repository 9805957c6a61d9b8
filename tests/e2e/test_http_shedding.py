"""The HTTP listeners shed what they cannot serve: clients that send nothing, headers a byte at a
time or a body that stalls are closed; connections past the cap are refused before the daemon runs
out of files; failed accepts make one line, not one a failure; a client that leaves mid-body leaves
no traceback."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import selectors
import socket
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from e2e.http_support import create_key, serve

if TYPE_CHECKING:
    from e2e.harness import Hippo

# Generous for a loaded machine: what is checked is that the connections close, not how fast.
DEADLINE = 60.0
HEADERS_SO_FAR = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
BODY_SO_FAR = (
    b"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 100\r\n\r\n" + b'{"content":'
)
needs_prlimit = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prlimit(2) is Linux's")


@pytest.fixture(autouse=True)
def _enough_files() -> None:
    """This test process opens hundreds of sockets: its soft limit goes up to what the hard one allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4096 if hard == resource.RLIM_INFINITY else min(hard, 4096)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _settings(hippo: Hippo, **http: Any) -> None:
    os.makedirs(hippo.home, exist_ok=True)
    with open(os.path.join(hippo.home, "daemon.json"), "w", encoding="utf-8") as handle:
        json.dump({"http": http}, handle)


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _connect(url: str, count: int, first: bytes = b"") -> list[socket.socket]:
    socks = []
    for _ in range(count):
        sock = socket.create_connection(_address(url), timeout=10)
        if first:
            sock.sendall(first)
        socks.append(sock)
    return socks


def _still_open(
    socks: Iterable[socket.socket], seconds: float, poke: Callable[[set[socket.socket]], None] | None = None
) -> set[socket.socket]:
    """The sockets the daemon has not closed within `seconds` (whatever it answered first is read
    and dropped); `poke` runs between waits, e.g. to send the next byte of a slow request."""
    left = set(socks)
    with selectors.DefaultSelector() as selector:
        for sock in left:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + seconds
        while left and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=0.2):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    left.discard(sock)
                    selector.unregister(sock)
            if poke is not None:
                poke(left)
    return left


def _one_byte_more(socks: set[socket.socket]) -> None:
    for sock in socks:
        with contextlib.suppress(OSError):  # closed already: the next select sees it
            sock.send(b"a")


def _close(socks: Iterable[socket.socket]) -> None:
    for sock in socks:
        sock.close()


def _log(hippo: Hippo) -> str:
    return Path(hippo.log).read_text(encoding="utf-8", errors="replace")


def test_clients_that_send_nothing_dribble_headers_or_stall_a_body_are_closed(hippo: Hippo) -> None:
    _settings(hippo, headerTimeoutSeconds=1, bodyTimeoutSeconds=1, keepAliveSeconds=1)
    url = serve(hippo)
    idle = _connect(url, 400)
    slow = _connect(url, 50, HEADERS_SO_FAR)
    stalled = _connect(url, 50, BODY_SO_FAR)
    kept_alive = _connect(url, 1, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    try:
        assert not _still_open(idle, DEADLINE), "connections that sent nothing stayed open"
        assert not _still_open(slow, DEADLINE, _one_byte_more), "headers sent a byte at a time stayed open"
        assert not _still_open(stalled, DEADLINE), "a stalled body kept its connection"
        # The answer comes first, then the connection idle between requests closes.
        assert not _still_open(kept_alive, DEADLINE), "an idle keep-alive connection stayed open"
    finally:
        _close(idle + slow + stalled + kept_alive)
    assert httpx.get(f"{url}/health").status_code == 200
    log = _log(hippo)
    assert " ERROR " not in log and "failed:" not in log, log[-2000:]


def test_the_default_timeouts_close_a_silent_client(hippo: Hippo) -> None:
    url = serve(hippo)  # no daemon.json: the defaults
    silent = _connect(url, 1)
    slow = _connect(url, 1, HEADERS_SO_FAR)
    try:
        assert not _still_open(silent + slow, DEADLINE, _one_byte_more)
    finally:
        _close(silent + slow)


def test_a_client_gone_mid_body_leaves_no_traceback(hippo: Hippo) -> None:
    url = serve(hippo, HIPPO_LOG_LEVEL="debug")
    # With a key: without one, a client whose socket is gone is no longer the daemon's user, and is
    # refused before its body is read.
    key = create_key(hippo).encode()
    body_so_far = BODY_SO_FAR.replace(b"\r\n\r\n", b"\r\nAuthorization: Bearer " + key + b"\r\n\r\n", 1)
    for _ in range(3):
        with socket.create_connection(_address(url), timeout=10) as sock:
            sock.sendall(body_so_far)
    # Each one is noticed, one way or the other, before the log is read.
    assert hippo.wait_for(
        lambda: (
            _log(hippo).count("went away before its body was complete")
            + _log(hippo).count("failed: ClientDisconnect")
            >= 3
        ),
        DEADLINE,
    )
    log = _log(hippo)
    assert "ClientDisconnect" not in log and " ERROR " not in log, log[-2000:]
    assert httpx.post(f"{url}/v1/memories", json={"content": "Still serving after the walkouts"}).is_success


@needs_prlimit
def test_a_flood_at_the_file_limit_is_refused_quietly_and_the_daemon_serves_on(hippo: Hippo) -> None:
    pid = hippo.start()
    # The daemon runs under a low open-file limit: the listener sizes its cap from it when it opens
    # (384 of 512), which leaves the daemon's own files (a few dozen) well inside the rest.
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (512, 512))
    url = str(hippo.json("serve", "--port", "0")["url"])
    flood = _connect(url, 800)
    try:
        assert hippo.wait_for(lambda: "refused" in _log(hippo) or "accept" in _log(hippo), DEADLINE)
        # Those past the cap hear why, in the one error shape, before the daemon closes them.
        answers = [_waiting(sock) for sock in flood]
        refused = [answer for answer in answers if answer.startswith(b"HTTP/1.1 503 ")]
        assert refused and all(b'"code":"too_many_connections"' in answer for answer in refused)
        # The daemon still has files for its own work while the flood holds its connections.
        assert hippo.json("status", "--global")["stores"][0]["total"] == 0
    finally:
        _close(flood)
    assert hippo.wait_for(lambda: _answers(url), DEADLINE), "the listener did not serve again"
    assert hippo.ok("remember", "--global", "Served after the flood").returncode == 0
    hippo.stop()
    lines = [line for line in _log(hippo).splitlines() if "refused" in line or "accept" in line]
    assert 1 <= len(lines) <= 3, (len(lines), lines[:5])
    assert " ERROR " not in _log(hippo)


@needs_prlimit
def test_failed_accepts_make_one_line_not_one_each(hippo: Hippo) -> None:
    pid = hippo.start()
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (256, 256))
    # More connections than the daemon has files: those past its limit cannot be accepted.
    flood = []
    try:
        for _ in range(400):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(hippo.socket)
            flood.append(sock)
        assert hippo.wait_for(lambda: "accept" in _log(hippo), DEADLINE)
    finally:
        _close(flood)
    assert hippo.wait_for(lambda: hippo.ctl("status", "--global").returncode == 0, DEADLINE)
    hippo.stop()
    # The daemon did run out of files (its other work may say so too), but the failed accepts,
    # thousands of them, make one warning line a minute.
    lines = [line for line in _log(hippo).splitlines() if "accept" in line]
    assert 1 <= len(lines) <= 3, (len(lines), lines[:5])
    assert all(" WARNING hippod.files: could not accept " in line for line in lines), lines


def _waiting(sock: socket.socket) -> bytes:
    """What the daemon has sent on `sock` so far, without waiting for more."""
    sock.setblocking(False)
    try:
        return sock.recv(65536)
    except (BlockingIOError, ConnectionResetError):
        return b""


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def test_junk_requests_and_upgrades_make_a_line_a_minute_not_a_line_each(hippo: Hippo) -> None:
    url = serve(hippo)
    junk = b"NOT HTTP AT ALL\r\n\r\n"
    upgrade = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
    for request in (junk, upgrade) * 100:
        with socket.create_connection(_address(url), timeout=10) as sock:
            sock.sendall(request)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):  # the whole answer: the daemon has logged what it logs by then
                pass
    hippo.stop()
    log = _log(hippo)
    assert 1 <= log.count("Invalid HTTP request received.") <= 2, log[-2000:]
    assert 1 <= log.count("Unsupported upgrade request.") <= 2, log[-2000:]
    assert log.count("No supported WebSocket library") <= 2, log[-2000:]
