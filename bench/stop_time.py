"""How long a busy daemon takes to stop: SIGTERM (or `hippoctl daemon stop`) in the middle of each
kind of long work, with the daemon's `shutdownGraceSeconds` set to each given value.

A measuring tool, not a test: it prints a table and asserts nothing about time. Each row is one
fresh sandbox and daemon:

- embedding: N memories imported into a store with embeddings on, stopped once the background pass
  has stored its first vectors;
- import: an import of N lines whose duplicate check is slow (a small vocabulary makes every line a
  candidate near-copy of many others), stopped once the check runs;
- import-write: an import of N lines of the bench corpus, stopped once it writes its memories;
- imported: an import of N lines of the bench corpus, stopped as soon as it has answered (its
  memories' mirrors are still being written);
- sleep: a store of N memories of the bench corpus, stopped once the sleep's plan has opened its
  snapshot;
- sleep-long: the same with N memories of 400 words each, which the plan takes minutes to compare;
- team: a laptop (embeddings on) joined to a team server (`hippod serve --team`, needs --pg) whose
  team holds N memories, stopped while it copies and embeds them.

Before getting busy, three memories are remembered (acknowledged). For each row: the seconds from
the signal until the process is gone (past --cap it is killed: ">cap"), how it ended (`clean`: its
log says "stopped"; `grace`: the daemon's own exit at the end of its grace; `killed`), whether the
acknowledged memories (and, for the team, the team's memories) are there after a restart, what the
stopped import left (nothing, or everything), and the vectors stored at the stop and --catch-up
seconds after the restart (the restarted daemon embeds what had none).

Usage: python bench/stop_time.py [--phases embedding,import,import-write,imported,sleep,sleep-long,team]
  [--grace 2,30] [--embed-size 3000] [--import-size 60000] [--write-size 100000]
  [--imported-size 30000] [--sleep-size 100000] [--long-size 3000] [--team-size 5000]
  [--pg postgresql://...] [--how sigterm|ctl] [--cap 300] [--catch-up 30] [--tmpdir DIR] [--keep]
  [--daemon-path DIR] (the daemon of another checkout, e.g. an older commit, for before/after figures)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import shutil
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
from clients import CONCURRENT_CLIENTS, remember_concurrent
from corpus import TEXT_SEED, make_corpus, make_memories
from harness import BenchError, Sandbox, call, kill_all_daemons, log, make_sandbox, start_daemon
from private_pg import free_port

from hippoctl import __version__ as CLIENT_VERSION
from hippoctl.protocol import messages as m
from hippoctl.protocol.framing import pack, recv_frame
from hippoctl.protocol.version import PROTOCOL

PHASES = ("embedding", "import", "import-write", "imported", "sleep", "sleep-long", "team")
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
    args: argparse.Namespace,
) -> str:
    """Stop the daemon once `busy()` says the request is at work (noted when it ended first); what
    the request's client heard."""
    wait(what, lambda: busy() or pending.reply is not None)
    if pending.reply is not None:
        row.notes.append(f"the request ended before the stop: {pending.answer()}")
    row.seconds, row.ended = stop(sb, proc, row.how, args.cap)
    return pending.answer()


def catch_up(db: str, seconds: float) -> int:
    """The vectors in the store `seconds` after a restart."""
    time.sleep(seconds)
    return vectors(db)


# --- the phases -------------------------------------------------------------------------------------


def _imported(sb: Sandbox, size: int) -> tuple[subprocess.Popen[bytes], int]:
    """A daemon, the acknowledged memories, then an import of `size` lines of the corpus: (the
    daemon, memories imported)."""
    proc = start_daemon(sb)
    remember_acknowledged(sb)
    path = os.path.join(sb.base, "notes.md")
    markdown(path, corpus_lines(size))
    return proc, import_file(sb, path)


def phase_embedding(row: Row, sb: Sandbox, args: argparse.Namespace) -> None:
    db = os.path.join(sb.home, "hippo.db")
    proc, imported = _imported(sb, row.size)
    wait("the first vectors", lambda: vectors(db) > len(ACKNOWLEDGED))
    row.seconds, row.ended = stop(sb, proc, row.how, args.cap)
    at_stop = vectors(db)
    start_daemon(sb)
    total = memories(db)
    later = catch_up(db, args.catch_up)
    row.kept = f"{'yes' if acknowledged_there(db) and total >= imported else 'NO'} ({total:,})"
    row.vectors = f"{at_stop:,} -> {later:,} of {total:,}"


def _import_phase(row: Row, sb: Sandbox, args: argparse.Namespace, lines: list[str], label: str) -> None:
    db = os.path.join(sb.home, "hippo.db")
    proc = start_daemon(sb)
    remember_acknowledged(sb)
    path = os.path.join(sb.base, "notes.md")
    markdown(path, lines)
    pending = Pending(sb, m.Import(format="markdown", path=path))
    answer = stop_during(row, sb, proc, pending, f"the step {label!r}", lambda: label in pending.labels, args)
    start_daemon(sb)
    total = memories(db)
    stored = total - len(ACKNOWLEDGED)
    left = "nothing" if stored == 0 else "all" if stored >= len(lines) else f"{stored:,} (PART)"
    row.kept = f"{'yes' if acknowledged_there(db) else 'NO'}; import: {answer}, stored {left}"


def phase_import(row: Row, sb: Sandbox, args: argparse.Namespace) -> None:
    _import_phase(row, sb, args, slow_lines(row.size), "checking for duplicates")


def phase_import_write(row: Row, sb: Sandbox, args: argparse.Namespace) -> None:
    _import_phase(row, sb, args, corpus_lines(row.size), "writing memories")


def phase_imported(row: Row, sb: Sandbox, args: argparse.Namespace) -> None:
    db = os.path.join(sb.home, "hippo.db")
    proc, imported = _imported(sb, row.size)
    # At once: its memories' mirrors are still being written.
    row.seconds, row.ended = stop(sb, proc, row.how, args.cap)
    start_daemon(sb)
    total = memories(db)
    ok = acknowledged_there(db) and total == imported + len(ACKNOWLEDGED)
    row.kept = f"{'yes' if ok else 'NO'} ({total:,})"


def phase_sleep(row: Row, sb: Sandbox, args: argparse.Namespace) -> None:
    proc = start_daemon(sb)
    path = os.path.join(sb.base, "notes.md")
    markdown(path, corpus_lines(row.size))
    _sleep_phase(row, sb, proc, import_file(sb, path), args)


def phase_sleep_long(row: Row, sb: Sandbox, args: argparse.Namespace) -> None:
    """Memories of 400 words from 20,000 (remembered: an import cuts chunks at 1,000 characters),
    which a sleep's pair joins take much longer to compare than short ones."""
    proc = start_daemon(sb)
    rng = random.Random(3)
    vocabulary = [f"w{n}x" for n in range(20_000)]
    items: list[tuple[str, list[str]]] = [
        (" ".join(rng.choices(vocabulary, k=400)), []) for _ in range(row.size)
    ]
    remember_concurrent(sb, items, CONCURRENT_CLIENTS)
    _sleep_phase(row, sb, proc, row.size, args)


def _sleep_phase(
    row: Row, sb: Sandbox, proc: subprocess.Popen[bytes], stored: int, args: argparse.Namespace
) -> None:
    db = os.path.join(sb.home, "hippo.db")
    remember_acknowledged(sb)
    real = os.path.realpath(db)
    handles = db_handles(proc.pid, real)
    pending = Pending(sb, m.Sleep(no_share=True))
    # The plan reads the store through a connection of its own: once that is open, the plan runs.
    planning = lambda: db_handles(proc.pid, real) > handles  # noqa: E731
    answer = stop_during(row, sb, proc, pending, "the plan's snapshot", planning, args)
    start_daemon(sb)
    total = memories(db)
    # A sleep that ended within the grace may have merged memories: then only the acknowledged count.
    ok = acknowledged_there(db) and (answer == "ok" or total == stored + len(ACKNOWLEDGED))
    row.kept = f"{'yes' if ok else 'NO'} ({total:,}); sleep: {answer}"


def _team_rows(dsn: str, tenant: str, size: int) -> None:
    """`size` memories of `tenant`, written straight into the team's database by the team store."""
    import asyncio

    from hippod.store.records import Memory
    from hippod.team import memories as team_memories
    from hippod.team.pg import Conn, TeamDatabase

    stamp = "2026-01-01T00:00:00.000Z"
    lines = corpus_lines(size)

    def memory(text: str) -> Memory:
        return Memory(
            id="mem_" + secrets.token_hex(6),
            tenant_id=tenant,
            content=text,
            layer="episodic",
            kind="distilled",
            created=stamp,
            valid_from=stamp,
            last_retrieved=stamp,
            retrieval_count=0,
            half_life_days=365.0,
            strength=1.0,
            emotional_valence="neutral",
            schema_fit=0.5,
            tags=[],
            source="cli",
            confidence="verified",
            pinned=False,
            outcome_positive=0,
            outcome_negative=0,
            outcome_score=None,
            updated_at=stamp,
        )

    async def fill() -> None:
        db = await TeamDatabase.open(dsn, min_size=1, max_size=2)
        try:
            for start in range(0, size, 1000):
                made = [memory(text) for text in lines[start : start + 1000]]

                async def insert(conn: Conn, made: list[Memory] = made) -> None:
                    for one in made:
                        await team_memories.insert(conn, one)

                await db.write(tenant, insert)
        finally:
            await db.close()

    asyncio.run(fill())


def phase_team(row: Row, sb: Sandbox, args: argparse.Namespace) -> None:
    if not args.pg:
        raise BenchError("the team phase needs --pg")
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = "hippod_stopbench_" + secrets.token_hex(4)
    with psycopg.connect(args.pg, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    dsn = make_conninfo("", **{**conninfo_to_dict(args.pg), "dbname": name})
    server = sandbox(30, False, args.daemon_path, args.tmpdir)
    try:
        port = free_port()
        server.env["HIPPO_V1_RPS"] = "0"
        start_daemon(server, ("serve", "--team", dsn, "--port", str(port)))
        made = call(server.sock, server.home, server.base, m.AuthCreate(tenant="acme", role="member"))
        if not isinstance(made, m.Result):
            raise BenchError(f"auth create failed: {made}")
        _team_rows(dsn, "acme", row.size)
        cache = os.path.join(sb.home, "team-cache", "hippo.db")
        proc = start_daemon(sb)
        remember_acknowledged(sb)
        url = f"http://127.0.0.1:{port}"
        joined = call(sb.sock, sb.home, sb.base, m.TeamJoin(url=url, key=made.data["plaintext"]))
        if not isinstance(joined, m.Result):
            raise BenchError(f"team join failed: {joined}")
        wait("the first team vectors", lambda: vectors(cache) > 0)
        copied = memories(cache)
        row.seconds, row.ended = stop(sb, proc, row.how, args.cap)
        at_stop = vectors(cache)
        row.notes.append(f"{copied:,} team memories copied when the stop came")
        start_daemon(sb)
        db = os.path.join(sb.home, "hippo.db")
        wait("the whole team copied", lambda: memories(cache) >= row.size, timeout=300)
        later = catch_up(cache, args.catch_up)
        row.kept = f"{'yes' if acknowledged_there(db) else 'NO'}; team copy {memories(cache):,}"
        row.vectors = f"{at_stop:,} -> {later:,} of {row.size:,}"
    finally:
        kill_all_daemons()
        shutil.rmtree(server.base, ignore_errors=True)
        with psycopg.connect(args.pg, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


RUNS: dict[str, tuple[Callable[[Row, Sandbox, argparse.Namespace], None], bool, str]] = {
    "embedding": (phase_embedding, True, "embed_size"),
    "import": (phase_import, False, "import_size"),
    "import-write": (phase_import_write, False, "write_size"),
    "imported": (phase_imported, False, "imported_size"),
    "sleep": (phase_sleep, False, "sleep_size"),
    "sleep-long": (phase_sleep_long, False, "long_size"),
    "team": (phase_team, True, "team_size"),
}


def run(phase: str, grace: float, args: argparse.Namespace) -> Row:
    work, embeddings, size_key = RUNS[phase]
    row = Row(phase, grace, int(getattr(args, size_key)), args.how)
    sb = sandbox(grace, embeddings, args.daemon_path, args.tmpdir)
    log(f"{phase}, grace {grace:g} s, {row.size:,}: sandbox {sb.base}")
    try:
        work(row, sb, args)
    except BenchError as exc:
        row.notes.append(f"failed: {exc}")
    finally:
        kill_all_daemons()
        if not args.keep:
            shutil.rmtree(sb.base, ignore_errors=True)
    took = "-" if row.seconds is None else f"{row.seconds:.1f}"
    log(f"{phase}, grace {grace:g} s: stopped in {took} s ({row.ended}); {row.kept}; {'; '.join(row.notes)}")
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--phases", default="embedding,import,import-write,imported,sleep,sleep-long")
    parser.add_argument("--grace", default="2,30", help="comma-separated shutdownGraceSeconds values")
    parser.add_argument("--embed-size", type=int, default=3000)
    parser.add_argument("--import-size", type=int, default=60000)
    parser.add_argument("--write-size", type=int, default=100000)
    parser.add_argument("--imported-size", type=int, default=30000)
    parser.add_argument("--sleep-size", type=int, default=100000)
    parser.add_argument("--long-size", type=int, default=3000)
    parser.add_argument("--team-size", type=int, default=5000)
    parser.add_argument("--pg", help="a PostgreSQL server (DSN) where the team phase makes its database")
    parser.add_argument("--how", choices=("sigterm", "ctl"), default="sigterm")
    parser.add_argument("--cap", type=float, default=300.0, help="kill a daemon not gone after this")
    parser.add_argument("--catch-up", type=float, default=30.0, help="seconds to watch vectors after restart")
    parser.add_argument("--tmpdir", default="/tmp")
    parser.add_argument("--keep", action="store_true", help="keep the sandboxes")
    parser.add_argument("--daemon-path", help="PYTHONPATH of the daemon: run another checkout's hippod")
    args = parser.parse_args(argv)
    phases = [p for p in args.phases.split(",") if p]
    unknown = [p for p in phases if p not in PHASES]
    if unknown:
        parser.error(f"unknown phase {unknown[0]!r}; phases: {', '.join(PHASES)}")
    rows = [run(phase, float(g), args) for phase in phases for g in args.grace.split(",")]
    print(
        f"| phase | size | grace s | stop | stop s (bound: grace + 5) | ended | acknowledged kept | "
        f"vectors: at stop -> {args.catch_up:g} s after restart | notes |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        took = f">{args.cap:g}" if r.seconds is None else f"{r.seconds:.1f}"
        print(
            f"| {r.phase} | {r.size:,} | {r.grace:g} | {r.how} | {took} | {r.ended} | {r.kept} | "
            f"{r.vectors or '-'} | {'; '.join(r.notes)} |"
        )
    print("\nload average (1, 5, 15 min) at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
