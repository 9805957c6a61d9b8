"""Fault injection: broken frames, protocol mismatches, broken stores, and refused peers."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
from typing import TYPE_CHECKING

import msgspec
import pytest

from hippoctl.protocol import messages as m
from hippoctl.protocol.framing import MAX_FRAME, pack, recv_frame

if TYPE_CHECKING:
    from e2e.harness import Hippo, RawConn


def still_serves(hippo: Hippo, marker: str) -> None:
    """A normal client still gets served after the fault."""
    done = hippo.ok("remember", f"{marker} survived the fault")
    assert done.stdout.startswith("Remembered [")
    data = hippo.json("recall", marker)
    assert [r["content"] for r in data["results"]] == [f"{marker} survived the fault"]


def expect_error_then_close(conn: RawConn, code: str) -> m.Error:
    reply = conn.recv()
    assert isinstance(reply, m.Error), reply
    assert reply.code == code, reply
    assert conn.at_eof(), "the daemon kept the connection open after a framing error"
    return reply


def test_garbage_body_after_valid_length(hippo: Hippo) -> None:
    hippo.start()
    with hippo.raw() as conn:
        conn.send_bytes(struct.pack(">I", 6) + b"\xc1\xc1\xc1\xc1\xc1\xc1")
        reply = conn.recv()
        # bad_frame, then close (closing without an answer is also allowed).
        if reply is not None:
            assert isinstance(reply, m.Error) and reply.code == "bad_frame", reply
            assert reply.exit_code == 4
            assert conn.at_eof()
    still_serves(hippo, "Garbagefox")


def test_garbage_after_hello(hippo: Hippo) -> None:
    hippo.start()
    with hippo.raw() as conn:
        assert isinstance(conn.hello(), m.Welcome)
        conn.send_bytes(struct.pack(">I", 3) + b"\x93\x01\x02")  # valid msgpack, not a message
        expect_error_then_close(conn, "bad_frame")
    still_serves(hippo, "Arrayfox")


def test_zero_length_frame(hippo: Hippo) -> None:
    hippo.start()
    with hippo.raw() as conn:
        conn.send_bytes(struct.pack(">I", 0))
        expect_error_then_close(conn, "bad_frame")
    still_serves(hippo, "Zerofox")


def test_oversized_length_prefix(hippo: Hippo) -> None:
    hippo.start()
    with hippo.raw() as conn:
        conn.send_bytes(struct.pack(">I", MAX_FRAME + 1))  # the body is never sent
        reply = expect_error_then_close(conn, "frame_too_large")
        assert str(MAX_FRAME + 1) in reply.message
    still_serves(hippo, "Hugefox")


def test_unknown_request_body(hippo: Hippo) -> None:
    hippo.start()
    with hippo.raw() as conn:
        assert isinstance(conn.hello(), m.Welcome)
        conn.send({"t": "Request", "id": 7, "cwd": "/", "body": {"t": "Teleport", "to": "mars"}})
        reply = conn.recv()
        assert isinstance(reply, m.Error), reply
        assert reply.code == "unsupported_request" and reply.id == 7, reply
        assert reply.exit_code == 4
    still_serves(hippo, "Teleportfox")


def test_first_frame_not_hello(hippo: Hippo) -> None:
    hippo.start()
    with hippo.raw() as conn:
        conn.send(m.Request(id=3, cwd="/", body=m.Status()))
        expect_error_then_close(conn, "bad_frame")
    still_serves(hippo, "Nohellofox")


@pytest.mark.parametrize("protocol", [999, 0])
def test_hello_with_unknown_protocol(hippo: Hippo, protocol: int) -> None:
    hippo.start()
    with hippo.raw() as conn:
        welcome = conn.hello(protocol=protocol)
        assert isinstance(welcome, m.Welcome), welcome
        conn.send(m.Request(id=3, cwd=hippo.root, body=m.Recall(query="anything")))
        reply = conn.recv()
        assert isinstance(reply, m.Error), reply
        assert (reply.id, reply.code, reply.exit_code) == (3, "protocol_mismatch", 4)
        assert f"this hippoctl speaks protocol {protocol}" in reply.message
        assert "hippoctl daemon restart" in reply.message
        assert conn.at_eof()
    still_serves(hippo, "Protofox")


@pytest.mark.parametrize("body", [m.Ping(), m.DaemonStatus()])
def test_frozen_requests_work_across_protocols(hippo: Hippo, body: m.Body) -> None:
    hippo.start()
    with hippo.raw() as conn:
        assert isinstance(conn.hello(protocol=999), m.Welcome)
        conn.send(m.Request(id=4, cwd=hippo.root, body=body))  # type: ignore[arg-type]
        reply = conn.recv()
        assert isinstance(reply, m.Result), reply
        assert hippo.proc is not None
        assert reply.data["pid"] == hippo.proc.pid


def test_hello_for_another_home(hippo: Hippo) -> None:
    hippo.start()
    with hippo.raw() as conn:
        reply = conn.hello(home=os.path.join(hippo.root, "other-home"))
        assert isinstance(reply, m.Error), reply
        assert reply.code == "home_mismatch" and reply.exit_code == 4
    still_serves(hippo, "Homefox")


def test_silent_client_is_dropped(hippo: Hippo) -> None:
    hippo.start()
    with hippo.raw(timeout=15) as conn:
        # No Hello: the daemon gives up after its 2 s handshake window and closes, sending nothing.
        assert conn.recv() is None
    still_serves(hippo, "Silentfox")


def test_half_frame_then_silence(hippo: Hippo) -> None:
    hippo.start()
    with hippo.raw(timeout=15) as conn:
        conn.send_bytes(struct.pack(">I", 100) + b"\x81")  # promises 100 bytes, sends 1
        assert conn.recv() is None
    still_serves(hippo, "Halffox")


_MISMATCH_CLIENT = """
import sys
import hippoctl.client
hippoctl.client.PROTOCOL = 999
from hippoctl.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_client_protocol_mismatch_exits_4(hippo: Hippo) -> None:
    hippo.start()
    for args in (["status"], ["recall", "anything"], ["remember", "never stored, wrong protocol"]):
        done = subprocess.run(
            [sys.executable, "-c", _MISMATCH_CLIENT, *args],
            env=hippo.env,
            cwd=hippo.root,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 4, (args, done.returncode, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert "speaks protocol 1; this hippoctl speaks protocol 999" in lines[0]
        assert "hippoctl daemon restart" in lines[0]
    assert hippo.json("status")["stores"][0]["total"] == 0


def test_daemon_validates_what_the_client_would(hippo: Hippo) -> None:
    """A client that skips the local checks still cannot store bad text."""
    hippo.start()
    for content in ("ab", "   ", "x" * (1024 * 1024 + 1)):
        with hippo.raw() as conn:
            assert isinstance(conn.hello(), m.Welcome)
            conn.send(m.Request(id=11, cwd=hippo.root, body=m.Remember(content=content)))
            reply = conn.recv()
            assert isinstance(reply, m.Error), reply
            assert reply.code == "usage" and reply.exit_code == 2 and reply.id == 11, reply
    with hippo.raw() as conn:
        assert isinstance(conn.hello(), m.Welcome)
        conn.send(m.Request(id=12, cwd=hippo.root, body=m.Remember(content="Owl", owner="root")))
        reply = conn.recv()
        assert isinstance(reply, m.Error) and reply.code == "usage", reply
    assert hippo.json("status")["stores"][0]["total"] == 0


def _project_with_db(hippo: Hippo, name: str, setup: str | bytes) -> str:
    project = os.path.join(hippo.root, name)
    os.makedirs(os.path.join(project, ".hippo"))
    db = os.path.join(project, ".hippo", "hippo.db")
    if isinstance(setup, bytes):
        with open(db, "wb") as handle:
            handle.write(setup)
    else:
        conn = sqlite3.connect(db)
        conn.executescript(setup)
        conn.close()
    return project


def _raw_remember(hippo: Hippo, cwd: str) -> m.Message | None:
    with hippo.raw() as conn:
        assert isinstance(conn.hello(), m.Welcome)
        conn.send(m.Request(id=21, cwd=cwd, body=m.Remember(content="Ferret notes must not land here")))
        return conn.recv()


def test_broken_project_stores_fail_alone(hippo: Hippo) -> None:
    hippo.start()
    stamp = "PRAGMA application_id = 1213222980;"
    other_app = "CREATE TABLE memories (id TEXT); PRAGMA application_id = 7;"
    foreign = _project_with_db(hippo, "foreign", other_app)
    unstamped = _project_with_db(hippo, "unstamped", "CREATE TABLE notes (id TEXT);")
    too_new = _project_with_db(hippo, "toonew", stamp + " PRAGMA user_version = 999;")
    garbage = _project_with_db(hippo, "garbage", b"this is not an sqlite database at all" * 100)
    cases = [
        (foreign, "foreign_store", "was not written by hippod", "hippoctl import --json"),
        (unstamped, "foreign_store", "was not written by hippod", "hippoctl import --json"),
        (too_new, "store_too_new", "has schema 999", "hippoctl daemon restart"),
    ]
    for project, code, words, hint in cases:
        reply = _raw_remember(hippo, project)
        assert isinstance(reply, m.Error), reply
        assert reply.code == code and reply.exit_code == 1, reply
        done = hippo.ctl("remember", "Ferret notes must not land here", cwd=project)
        assert done.returncode == 1, (project, done.returncode, done.stderr)
        [line] = done.stderr.strip().splitlines()
        assert line.startswith(f"hippoctl: {project}/.hippo/hippo.db ") and words in line, line
        assert hint in line
    reply = _raw_remember(hippo, garbage)
    assert isinstance(reply, m.Error) and reply.exit_code == 1, reply
    done = hippo.ctl("remember", "Ferret notes must not land here", cwd=garbage)
    assert done.returncode == 1, done.stderr
    # The foreign files are left exactly as they were, and other stores keep working.
    conn = sqlite3.connect(f"file:{foreign}/.hippo/hippo.db?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == 7
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["memories"]
    finally:
        conn.close()
    with open(f"{garbage}/.hippo/hippo.db", "rb") as handle:
        assert handle.read() == b"this is not an sqlite database at all" * 100
    still_serves(hippo, "Ferretfox")
    assert hippo.json("status")["stores"][0]["total"] == 1


def test_unresponsive_lock_holder(hippo: Hippo) -> None:
    """A second daemon facing a held lock and a frozen socket gives up with exit 1 (daemon.md §3.2)."""
    hippo.start()
    daemon = hippo.proc
    assert daemon is not None
    os.kill(daemon.pid, signal.SIGSTOP)
    try:
        late = hippo.spawn()
        code = late.wait(timeout=60)
    finally:
        os.kill(daemon.pid, signal.SIGCONT)
    out, err = hippo.output(late)
    assert code == 1, (out, err)
    assert err.strip() == "hippod: lock held by unresponsive process"
    assert hippo.answers() == daemon.pid  # the frozen one, once thawed, still owns everything
    still_serves(hippo, "Frozenfox")


def _hello_as(uid: int, path: str, home: str) -> str:
    """In a forked child running as `uid`, connect and say Hello; 'reply' or 'closed'."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        result = b"error"
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(10)
                sock.connect(path)
                hello = m.Hello(protocol=1, client_version="x", pid=os.getpid(), home=home)
                try:
                    sock.sendall(pack(msgspec.msgpack.encode(hello)))
                    result = b"reply" if recv_frame(sock) else b"closed"
                except OSError:
                    result = b"closed"
        except BaseException as exc:
            result = f"error {exc!r}".encode()
        finally:
            os.write(write_end, result)
            os._exit(0)
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as handle:
            return handle.read().decode()
    finally:
        os.waitpid(pid, 0)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another user")
def test_other_users_are_dropped(hippo: Hippo) -> None:
    """Even with the socket opened up to everyone, a connection from another uid gets nothing."""
    hippo.start()
    os.chmod(hippo.root, 0o755)
    os.chmod(hippo.socket, 0o666)
    assert _hello_as(os.getuid(), hippo.socket, hippo.home) == "reply"  # the probe itself works
    assert _hello_as(65534, hippo.socket, hippo.home) == "closed"
    still_serves(hippo, "Strangerfox")


def test_daemon_frame_limit_from_daemon_json(hippo: Hippo) -> None:
    """A daemon configured below the client's 16 MiB limit refuses big requests; the client says why."""
    os.makedirs(hippo.home, mode=0o700)
    with open(os.path.join(hippo.home, "daemon.json"), "w", encoding="utf-8") as handle:
        handle.write('{"maxFrameBytes": 65536}')
    hippo.start()
    for size in (70_000, 1_000_000):
        done = hippo.ctl("remember", "-", input="Walrus " + "w" * size)
        assert done.returncode == 1, (size, done.returncode, done.stderr)
        assert "exceeds the limit of 65536 bytes" in done.stderr, done.stderr
    still_serves(hippo, "Walrusfox")
    assert hippo.json("status")["stores"][0]["total"] == 1


def test_reply_over_the_frame_limit_is_an_error(hippo: Hippo) -> None:
    """A reply too big for the frame limit becomes a frame_too_large Error, not a dropped connection."""
    os.makedirs(hippo.home, mode=0o700)
    with open(os.path.join(hippo.home, "daemon.json"), "w", encoding="utf-8") as handle:
        handle.write('{"maxFrameBytes": 8192}')
    hippo.start()
    for n in range(3):
        hippo.ok("remember", f"Capybara note {n} " + "lorem ipsum " * 300)
    done = hippo.ctl("recall", "capybara", "--budget", "100000")
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "frame limit" in done.stderr and "--budget" in done.stderr, done.stderr
    small = hippo.json("recall", "capybara", "--limit", "1")
    assert len(small["results"]) == 1
