"""bench/stop_time.py's plumbing: its sandboxes, the memories it fills them with and reads back, a
request left running on its own connection, and the stop it times."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
from corpus import TEXT_SEED, make_corpus, make_memories
from harness import BenchError, Sandbox, call, make_sandbox

from hippoctl import __version__ as CLIENT_VERSION
from hippoctl.protocol import messages as m
from hippoctl.protocol.framing import pack, recv_frame
from hippoctl.protocol.version import PROTOCOL

ACKNOWLEDGED = (
    "The staging deploy needs the VPN up first",
    "Releases are cut on Tuesdays",
    "Pin numpy to 2.x",
)
BUSY_WAIT = 900.0


@dataclass
class Row:
    phase: str
    grace: float
    size: int
    how: str
    seconds: float | None = None  # None: killed at the cap
    ended: str = ""
    kept: str = ""
    vectors: str = ""
    notes: list[str] = field(default_factory=list)


# --- the sandbox -------------------------------------------------------------------------------------


def sandbox(grace: float, embeddings: bool, daemon_path: str | None, parent: str) -> Sandbox:
    sb = make_sandbox(0, parent)
    with open(os.path.join(sb.home, "config.json"), "w", encoding="utf-8") as f:
        json.dump({"embeddings": {"enabled": embeddings}, "autoSleep": {"enabled": False}}, f)
    with open(os.path.join(sb.home, "daemon.json"), "w", encoding="utf-8") as f:
        json.dump({"daily": {"enabled": False}, "shutdownGraceSeconds": grace}, f)
    if daemon_path:
        sb.env["PYTHONPATH"] = daemon_path
    return sb


def count(db: str, sql: str) -> int:
    """One number from a store's file, read beside the daemon (WAL lets it)."""
    if not os.path.exists(db):
        return 0
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as conn:
        return int(conn.execute(sql).fetchone()[0])


def memories(db: str) -> int:
    return count(db, "SELECT count(*) FROM memories")


def vectors(db: str) -> int:
    try:
        return count(db, "SELECT count(*) FROM embeddings")
    except sqlite3.OperationalError:
        return 0


def acknowledged_there(db: str) -> bool:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as conn:
        have = {row[0] for row in conn.execute("SELECT content FROM memories")}
    return all(text in have for text in ACKNOWLEDGED)


def remember_acknowledged(sb: Sandbox) -> None:
    for text in ACKNOWLEDGED:
        reply = call(sb.sock, sb.home, sb.base, m.Remember(content=text))
        if not isinstance(reply, m.Result):
            raise BenchError(f"remember failed: {reply}")


def markdown(path: str, lines: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write("# Bench notes\n" + "".join(f"- {line}\n" for line in lines))


def corpus_lines(size: int) -> list[str]:
    return [text for text, _ in make_memories(make_corpus(), size, TEXT_SEED + size)]


def slow_lines(size: int) -> list[str]:
    """Lines of 12 words from 400: each is a candidate near-copy of many others, checked exactly."""
    rng = random.Random(7)
    syllables = [c + v for c in "bcdfgklmnprstvz" for v in "aeiou"]
    words = sorted({"".join(rng.sample(syllables, 3)) for _ in range(400)})
    return [" ".join(rng.sample(words, 12)) for _ in range(size)]


def import_file(sb: Sandbox, path: str) -> int:
    reply = call(sb.sock, sb.home, sb.base, m.Import(format="markdown", path=path), timeout=3600)
    if not isinstance(reply, m.Result):
        raise BenchError(f"import failed: {reply}")
    return int(reply.data["imported"])


# --- a request left running ----------------------------------------------------------------------------


class Pending:
    """One request sent on its own connection; its frames are read by a thread as they come."""

    def __init__(self, sb: Sandbox, body: Any) -> None:
        self.labels: list[str] = []
        self.reply: Any = None
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(sb.sock)
        hello = m.Hello(protocol=PROTOCOL, client_version=CLIENT_VERSION, pid=os.getpid(), home=sb.home)
        request = m.Request(id=1, cwd=sb.base, body=body)
        encode = msgspec.msgpack.Encoder().encode
        self.sock.sendall(pack(encode(hello)) + pack(encode(request)))
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        decode = msgspec.msgpack.Decoder(m.DaemonMessage).decode
        try:
            while (raw := recv_frame(self.sock)) is not None:
                frame = decode(raw)
                if isinstance(frame, m.Progress):
                    self.labels.append(frame.line)
                elif isinstance(frame, m.Result | m.Error):
                    self.reply = frame
                    return
            self.reply = "the connection closed without a reply"
        except OSError as exc:
            self.reply = f"the connection broke: {exc}"

    def answer(self) -> str:
        self.thread.join(timeout=30)
        self.sock.close()
        reply = self.reply
        if isinstance(reply, m.Result):
            return "ok"
        if isinstance(reply, m.Error):
            return f"error {reply.code}"
        return str(reply)


def wait(what: str, predicate: Callable[[], bool], timeout: float = BUSY_WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise BenchError(f"gave up waiting for {what}")
        time.sleep(0.05)


def db_handles(pid: int, db: str) -> int:
    """Descriptors the process has open on the store's file and its WAL (a new connection adds one)."""
    names = {db, db + "-wal"}
    found = 0
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                found += os.readlink(f"/proc/{pid}/fd/{fd}") in names
    return found


# --- stopping ----------------------------------------------------------------------------------------


def stop(sb: Sandbox, proc: subprocess.Popen[bytes], how: str, cap: float) -> tuple[float | None, str]:
    """Ask the daemon to stop; (seconds until its process is gone or None past the cap, how it ended)."""
    started = time.monotonic()
    client = None
    if how == "ctl":
        client = subprocess.Popen(
            [sys.executable, "-m", "hippoctl", "daemon", "stop"],
            env=sb.env,
            cwd=sb.base,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    else:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=cap)
        seconds: float | None = time.monotonic() - started
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        seconds = None
    if client is not None:
        client.wait(timeout=60)
    with open(os.path.join(sb.home, "logs", "hippod.log"), encoding="utf-8", errors="replace") as f:
        text = f.read()
    if seconds is None:
        ended = "killed"
    elif "exiting now" in text.rsplit("shutting down", 1)[-1]:
        ended = "grace"
    elif text.rstrip().endswith("stopped"):
        ended = "clean"
    else:
        ended = f"exit {proc.returncode}"
    return seconds, ended


def stop_during(
    row: Row,
    sb: Sandbox,
    proc: subprocess.Popen[bytes],
    pending: Pending,
    what: str,
    busy: Callable[[], bool],
    cap: float,
) -> str:
    """Stop the daemon once `busy()` says the request is at work (noted when it ended first); what
    the request's client heard."""
    wait(what, lambda: busy() or pending.reply is not None)
    if pending.reply is not None:
        row.notes.append(f"the request ended before the stop: {pending.answer()}")
    row.seconds, row.ended = stop(sb, proc, row.how, cap)
    return pending.answer()


def catch_up(db: str, seconds: float) -> int:
    """The vectors in the store `seconds` after a restart."""
    time.sleep(seconds)
    return vectors(db)
