"""The search by meaning at scale: time and memory of the nearest index, and a daemon's RSS holding it.

Part one, in this process: for each size, random unit vectors of 384 dimensions (the model's) are put
into a NearestIndex (embed/nearest.py, int8 rows), and the float32 matrix the index held before is
built beside it for comparison. Each answers the same 50 queries (a stored vector plus noise, so each
has a true neighbour); the table gives search p50/p99 ms, the int8 matrix's MB (with its room to
grow, which doubles) and its ids' (the Python strings and their dict), the same for float32, and how
many of float32's top 10 the int8 index also returns (recall@10 against the exact search).

Part two (`--daemon N`): a real daemon with a store of N memories, each with a vector (random unit
vectors stored with their memory's text digest, so nothing is left to embed), and the model loaded
by recalls through the socket; its VmRSS after 20 recalls, then after EMBED_MORE new memories
remembered by 4 clients and embedded (the background pass, then an `embed` request), and its peak
(VmHWM). The store is filled by
`import --markdown` with embeddings off, the vectors written with sqlite3 while the daemon is stopped,
and embeddings turned on for the second start. HIPPO_EMBED_GRAPH=shipped in this bench's environment
reaches the daemon, to measure the shipped graph instead.

Prints tables and asserts nothing. Usage: python bench/vector_search.py [--sizes 10000,100000,1000000]
[--daemon 100000]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sqlite3
import sys
import time

import ingest_import
import numpy as np
import numpy.typing as npt
from clients import CONCURRENT_CLIENTS, remember_concurrent
from corpus import TEXT_SEED, make_corpus, make_memories, make_queries
from harness import BenchError, call, kill_all_daemons, log, make_sandbox, pct, proc_status_kb, start_daemon
from harness import stop_daemon as stop
from scale import write_markdown

from hippoctl.protocol import messages as m
from hippod.embed import nearest, vectors
from hippod.embed.service import embedding_text, text_digest
from hippod.store.config import DEFAULT_MODEL

DIM = 384
QUERIES = 50
TOP = 10
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
PUT_BATCH = 10_000
# Memories remembered through the socket after the recalls, and embedded by the daemon.
EMBED_MORE = 2_000


def _unit(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return vectors.normalise(rows)


def _random_rows(rng: np.random.Generator, count: int) -> npt.NDArray[np.float32]:
    return _unit(rng.standard_normal((count, DIM), dtype=np.float32))


def search_row(size: int) -> list[str]:
    """One size's figures: int8 index against the float32 matrix."""
    rng = np.random.default_rng(size)
    index = nearest.NearestIndex(DEFAULT_MODEL, DIM)
    started = time.perf_counter()
    kept = []  # the query seeds, to make queries with a true neighbour
    for start in range(0, size, PUT_BATCH):
        rows = _random_rows(rng, min(PUT_BATCH, size - start))
        kept.append(rows[0])
        index.put([(f"m{start + i}", vectors.to_blob(row)) for i, row in enumerate(rows)])
    put_s = time.perf_counter() - started
    held_mb = index.nbytes() / 2**20
    ids_mb = (
        sum(sys.getsizeof(i) for i in index._ids) + sys.getsizeof(index._ids) + sys.getsizeof(index._row_of)
    ) / 2**20
    queries = [
        vectors.to_blob(_unit((kept[q % len(kept)] + 0.8 * _random_rows(rng, 1)[0])[None, :])[0])
        for q in range(QUERIES)
    ]
    int8_times, int8_found = [], []
    for query in queries:
        t = time.perf_counter()
        int8_found.append(index.nearest(query, -1.0, set(), limit=TOP))
        int8_times.append(time.perf_counter() - t)
    matrix = np.empty((size, DIM), dtype=np.float32)
    for row in range(0, size, PUT_BATCH):
        end = min(row + PUT_BATCH, size)
        matrix[row:end] = index._codes[row:end].astype(np.float32) * index._scales[row:end, None]
    float_times, agree = [], 0
    for query, found in zip(queries, int8_found, strict=True):
        t = time.perf_counter()
        cos = matrix @ np.frombuffer(query, dtype="<f4")
        top = np.argpartition(-cos, TOP - 1)[:TOP]
        float_times.append(time.perf_counter() - t)
        agree += len({f"m{r}" for r in top.tolist()} & set(found))
    float_mb = matrix.nbytes / 2**20
    ms = 1e3
    del matrix, index
    gc.collect()
    return [
        f"{size:,}",
        f"{put_s:.1f}",
        f"{pct(int8_times, 50) * ms:.1f}",
        f"{pct(int8_times, 99) * ms:.1f}",
        f"{held_mb:.0f}",
        f"{ids_mb:.0f}",
        f"{pct(float_times, 50) * ms:.1f}",
        f"{pct(float_times, 99) * ms:.1f}",
        f"{float_mb:.0f}",
        f"{agree / (QUERIES * TOP):.3f}",
    ]


def daemon_row(size: int) -> list[str]:
    """A daemon's RSS with a store of `size` memories with vectors, the model and the index loaded."""
    sb = make_sandbox(size)
    try:
        proc = start_daemon(sb)
        try:
            path = os.path.join(sb.base, "fill.md")
            write_markdown(path, make_memories(make_corpus(), size, TEXT_SEED), 0)
            reply = ingest_import._import(sb.sock, sb.home, sb.base, path)
            if isinstance(reply, m.Error):
                raise BenchError(f"import failed: {reply.code}: {reply.message}")
        finally:
            stop(proc)
        stored = _write_vectors(os.path.join(sb.home, "hippo.db"))
        os.unlink(os.path.join(sb.home, "config.json"))  # embeddings back to "auto"
        proc = start_daemon(sb)
        try:
            queries = make_queries(make_corpus())[:20]
            started = time.perf_counter()
            for query in queries:
                done = call(sb.sock, sb.home, sb.base, m.Recall(query=query, limit=10), timeout=600.0)
                if isinstance(done, m.Error):
                    raise BenchError(f"recall failed: {done.code}: {done.message}")
            first_s = time.perf_counter() - started
            rss = proc_status_kb(proc.pid, "VmRSS") / 1024
            more = make_memories(make_corpus(), EMBED_MORE, TEXT_SEED + 1)
            remember_concurrent(sb, more, CONCURRENT_CLIENTS)
            done = call(sb.sock, sb.home, sb.base, m.Embed(), timeout=3600.0)
            if isinstance(done, m.Error):
                raise BenchError(f"embed failed: {done.code}: {done.message}")
            embedded = proc_status_kb(proc.pid, "VmRSS") / 1024
            peak = proc_status_kb(proc.pid, "VmHWM") / 1024
        finally:
            stop(proc)
    finally:
        shutil.rmtree(sb.base, ignore_errors=True)
    graph = os.environ.get("HIPPO_EMBED_GRAPH") or "int8 (unless the daemon's code predates it)"
    return [f"{stored:,}", graph, f"{first_s:.1f}", f"{rss:.0f}", f"{embedded:.0f}", f"{peak:.0f}"]


def _write_vectors(db: str) -> int:
    """A random unit vector for every memory, with its text's digest; returns how many."""
    rng = np.random.default_rng(0)
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT id, content, tags FROM memories").fetchall()
        with conn:
            for start in range(0, len(rows), PUT_BATCH):
                part = rows[start : start + PUT_BATCH]
                blobs = _random_rows(rng, len(part))
                conn.executemany(
                    "INSERT INTO embeddings (memory_id, model, dim, vector, content_digest) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [
                        (
                            mid,
                            DEFAULT_MODEL,
                            DIM,
                            vectors.to_blob(blob),
                            text_digest(embedding_text(c, json.loads(t))),
                        )
                        for (mid, c, t), blob in zip(part, blobs, strict=True)
                    ],
                )
    finally:
        conn.close()
    return len(rows)


def _table(header: list[str], rows: list[list[str]]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="index sizes, comma-separated"
    )
    parser.add_argument(
        "--daemon", type=int, default=0, help="also a daemon's RSS with a store of N memories"
    )
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s]
    except ValueError:
        parser.error("--sizes takes whole numbers separated by commas")
    rows = []
    for size in sizes:
        log(f"index of {size}")
        rows.append(search_row(size))
    _table(
        [
            "vectors",
            "put s",
            "int8 p50 ms",
            "p99 ms",
            "int8 MB",
            "ids MB",
            "float32 p50 ms",
            "p99 ms",
            "float32 MB",
            "int8 recall@10",
        ],
        rows,
    )
    if args.daemon:
        try:
            log(f"daemon with {args.daemon} memories")
            row = daemon_row(args.daemon)
        except BenchError as exc:
            print(f"vector_search: {exc}", file=sys.stderr)
            return 1
        finally:
            kill_all_daemons()
        print()
        _table(
            [
                "memories with vectors",
                "graph",
                "20 recalls s",
                "daemon RSS MB",
                f"after {EMBED_MORE:,} more embedded",
                "peak MB",
            ],
            [row],
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
