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
import os
import random
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable

from clients import CONCURRENT_CLIENTS, remember_concurrent
from harness import BenchError, Sandbox, call, kill_all_daemons, log, start_daemon
from private_pg import free_port
from stop_plumbing import (
    ACKNOWLEDGED,
    Pending,
    Row,
    acknowledged_there,
    catch_up,
    corpus_lines,
    db_handles,
    import_file,
    markdown,
    memories,
    remember_acknowledged,
    sandbox,
    slow_lines,
    stop,
    stop_during,
    vectors,
    wait,
)

from hippoctl.protocol import messages as m

PHASES = ("embedding", "import", "import-write", "imported", "sleep", "sleep-long", "team")


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
    answer = stop_during(
        row, sb, proc, pending, f"the step {label!r}", lambda: label in pending.labels, args.cap
    )
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
    answer = stop_during(row, sb, proc, pending, "the plan's snapshot", planning, args.cap)
    start_daemon(sb)
    total = memories(db)
    # A sleep that ended within the grace may have merged memories: then only the acknowledged count.
    ok = acknowledged_there(db) and (answer == "ok" or total == stored + len(ACKNOWLEDGED))
    row.kept = f"{'yes' if ok else 'NO'} ({total:,}); sleep: {answer}"


def _team_rows(dsn: str, tenant: str, size: int) -> None:
    """`size` memories of `tenant`, written straight into the team's database by the team store."""
    import asyncio

    from hippod.model.memory import Memory
    from hippod.store.postgres import memories as team_memories
    from hippod.store.postgres.pg import Conn, TeamDatabase

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
