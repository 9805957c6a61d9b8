"""The hook transport (daemon.md §10.5) against daemons that misbehave: one that is shutting down,
one that accepts and never answers, one that refuses the payload. A real `hippoctl` process talks
to a real Unix socket served by a small in-test listener."""

from __future__ import annotations

import json
import os
import re
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol import spool
from hippoctl.protocol.framing import pack, recv_frame

if TYPE_CHECKING:
    from e2e.harness import Hippo

PAYLOAD = json.dumps({"session_id": "s", "tool_name": "Bash", "error": "make: *** [all] Error 2"})
Answer = Callable[[socket.socket, m.Request], None]


@contextmanager
def listener(path: str, answer: Answer) -> Iterator[list[m.Request]]:
    """Serve Hello/Welcome and then `answer` for each connection; yields the requests received."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    seen: list[m.Request] = []
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            conn.settimeout(10)
            hello = msgspec.msgpack.decode(recv_frame(conn) or b"", type=m.ClientMessage)
            assert isinstance(hello, m.Hello)
            request = msgspec.msgpack.decode(recv_frame(conn) or b"", type=m.ClientMessage)
            assert isinstance(request, m.Request)
            seen.append(request)
            answer(conn, request)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        server.close()
        for conn in held:
            conn.close()
        os.unlink(path)


def welcome_then(reply: m.Message | None) -> Answer:
    def answer(conn: socket.socket, request: m.Request) -> None:
        conn.sendall(pack(msgspec.msgpack.encode(m.Welcome(protocol=1, daemon_version="x", pid=1,
                                                           started_at="", home=""))))  # fmt: skip
        if reply is not None:
            conn.sendall(pack(msgspec.msgpack.encode(reply)))

    return answer


def spooled(hippo: Hippo) -> list[dict[str, object]]:
    folder = os.path.join(hippo.home, "spool", "capture-error")
    return [json.loads(Path(folder, n).read_text()) for n in sorted(spool.json_names(folder))]


def test_a_daemon_shutting_down_gets_the_request_spooled(hippo: Hippo) -> None:
    refusal = m.Error(id=1, code="shutting_down", message="hippod is shutting down", exit_code=3)
    with listener(hippo.socket, welcome_then(refusal)) as seen:
        done = hippo.ctl("capture-error", input=PAYLOAD, env=hippo.daemon_env(HIPPO_NO_SPAWN="1"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    [sent] = seen
    [document] = spooled(hippo)
    assert document["stdin"] == json.loads(PAYLOAD)
    # The live request carried the key of the file it was then spooled as.
    assert isinstance(sent.body, m.CaptureError)
    name = spool.json_names(os.path.join(hippo.home, "spool", "capture-error"))[0]
    assert sent.body.spool_key == spool.key_of(name)


def test_a_silent_daemon_is_given_up_on_within_the_budget(hippo: Hippo) -> None:
    env = hippo.daemon_env(HIPPO_NO_SPAWN="1", HIPPO_HOOK_TIMEOUT_MS="700")
    # Without the budget each would wait out the 60 s request timeout, past these 30 s.
    with listener(hippo.socket, welcome_then(None)):
        done = hippo.ctl("capture-error", input=PAYLOAD, env=env, timeout=30)
        strict = hippo.ctl("capture-error", "--strict", input=PAYLOAD, env=env, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert strict.returncode == 3
    folder = os.path.join(hippo.home, "spool", "capture-error")
    expected = rf"hippoctl: hippod stopped answering; the request waits in {re.escape(folder)}/\S+\.json\n"
    assert re.fullmatch(expected, strict.stderr), strict.stderr
    assert len(spooled(hippo)) == 2


def test_an_error_reply_is_not_spooled(hippo: Hippo) -> None:
    refusal = m.Error(id=1, code="usage", message="capture-error: the input has no tool_name", exit_code=2)
    with listener(hippo.socket, welcome_then(refusal)):
        done = hippo.ctl("capture-error", input="{}", env=hippo.daemon_env(HIPPO_NO_SPAWN="1"))
        strict = hippo.ctl("capture-error", "--strict", input="{}", env=hippo.daemon_env(HIPPO_NO_SPAWN="1"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert (strict.returncode, strict.stderr) == (2, "hippoctl: capture-error: the input has no tool_name\n")
    assert spooled(hippo) == []
