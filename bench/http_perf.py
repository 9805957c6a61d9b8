"""The HTTP API beside the socket, on the same store: recall latency, requests a second, daemon RSS.

A measuring tool, not a test: it prints plain-text tables and asserts nothing about time.

For each size it fills a fresh sandbox's global store through the socket (4 clients, as perf.py does),
opens the listener with a Serve request, then measures on the perf bench's 200 queries:

* recall through the socket, one connection per request as hippoctl makes it, with and without the
  strengthening write (HTTP recall does not strengthen, so "socket, no write" is the like-for-like row);
* `GET /v1/memories?q=<query>&limit=10` through one persistent httpx client (keep-alive);
* requests a second with 4 concurrent clients for 10 s each, socket and HTTP;
* the daemon's RSS before the listener opens, after, and after the load;
* the client's side: `import hippoctl.cli` cold, and whether it loads starlette or uvicorn.

Usage: python bench/http_perf.py [--sizes 10000,100000] [--seconds 10] [--keep]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx
from clients import CONCURRENT_CLIENTS, cold_start, remember_concurrent
from corpus import TEXT_SEED, make_corpus, make_memories, make_queries
from harness import (
    BenchError,
    Sandbox,
    call,
    kill_all_daemons,
    log,
    make_sandbox,
    pct,
    proc_status_kb,
    start_daemon,
    stop_daemon,
)

from hippoctl.protocol import messages as m

DEFAULT_SIZES = (10_000, 100_000)
WARMUP = 10
LIMIT = 10


@dataclass
class Row:
    name: str
    times: list[float]


@dataclass
class SizeFigures:
    size: int
    rows: list[Row]
    throughput: dict[str, float]
    rss_kb: dict[str, int]


def _socket_recall(sb: Sandbox, query: str, strengthen: bool) -> None:
    reply = call(sb.sock, sb.home, sb.base, m.Recall(query=query, limit=LIMIT, strengthen=strengthen))
    if isinstance(reply, m.Error):
        raise BenchError(f"socket recall failed: {reply.code}: {reply.message}")


def _http_recall(client: httpx.Client, query: str) -> None:
    answer = client.get("/v1/memories", params={"q": query, "limit": LIMIT})
    if answer.status_code != 200:
        raise BenchError(f"HTTP recall answered {answer.status_code}: {answer.text[:200]}")


def _latencies(queries: Sequence[str], run: Callable[[str], None]) -> list[float]:
    for query in queries[:WARMUP]:
        run(query)
    times = []
    for query in queries:
        start = time.perf_counter()
        run(query)
        times.append(time.perf_counter() - start)
    return times


def _throughput(
    queries: Sequence[str], make_run: Callable[[], Callable[[str], None]], seconds: float
) -> float:
    """Requests a second from CONCURRENT_CLIENTS threads, each sending one query after another."""
    counts = [0] * CONCURRENT_CLIENTS
    failures: list[BaseException] = []
    stop = time.monotonic() + seconds

    def worker(n: int) -> None:
        run = make_run()
        try:
            while time.monotonic() < stop:
                run(queries[(counts[n] * CONCURRENT_CLIENTS + n) % len(queries)])
                counts[n] += 1
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(CONCURRENT_CLIENTS)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise BenchError(f"a client failed: {failures[0]!r}")
    return sum(counts) / (time.perf_counter() - start)


def run_size(size: int, seconds: float, keep: bool) -> SizeFigures:
    corpus = make_corpus()
    queries = make_queries(corpus)
    sb = make_sandbox(size)
    sb.env["HIPPO_V1_RPS"] = "0"  # the per-address limit would cap one machine's bench at 20/s
    log(f"size {size}: sandbox {sb.base}")
    try:
        proc = start_daemon(sb)
        rate = remember_concurrent(sb, make_memories(corpus, size, TEXT_SEED + size), CONCURRENT_CLIENTS)
        log(f"size {size}: filled at {rate:.0f}/s")
        rss = {"before serve": proc_status_kb(proc.pid, "VmRSS")}
        served = call(sb.sock, sb.home, sb.base, m.Serve(port=0))
        if not isinstance(served, m.Result):
            raise BenchError(f"serve failed: {served}")
        url = served.data["url"]
        rss["listener open"] = proc_status_kb(proc.pid, "VmRSS")
        rows = [
            Row("socket, strengthening", _latencies(queries, lambda q: _socket_recall(sb, q, True))),
            Row("socket, no write", _latencies(queries, lambda q: _socket_recall(sb, q, False))),
        ]
        with httpx.Client(base_url=url, timeout=60) as client:
            rows.append(Row("HTTP keep-alive", _latencies(queries, lambda q: _http_recall(client, q))))
        clients: list[httpx.Client] = []

        def http_run() -> Callable[[str], None]:
            client = httpx.Client(base_url=url, timeout=60)
            clients.append(client)
            return lambda q: _http_recall(client, q)

        throughput = {
            "socket, no write": _throughput(queries, lambda: lambda q: _socket_recall(sb, q, False), seconds),
            "HTTP keep-alive": _throughput(queries, http_run, seconds),
        }
        for client in clients:
            client.close()
        rss["after the load"] = proc_status_kb(proc.pid, "VmRSS")
        log(f"size {size}: HTTP p50 {pct(rows[-1].times, 50) * 1e3:.1f} ms")
        stop_daemon(proc)
        return SizeFigures(size, rows, throughput, rss)
    finally:
        kill_all_daemons()
        if not keep:
            shutil.rmtree(sb.base, ignore_errors=True)


def client_figures() -> tuple[float, float, bool]:
    """`import hippoctl.cli` cold (p50, p90, ms), and whether it loads the ASGI stack."""
    times = cold_start("import hippoctl.cli", runs=20)
    probe = "import sys, hippoctl.cli; print(bool({'starlette', 'uvicorn'} & set(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return pct(times, 50) * 1e3, pct(times, 90) * 1e3, loaded.stdout.strip() == "True"


def render(results: Sequence[SizeFigures], client: tuple[float, float, bool]) -> str:
    lines = ["Recall latency, 200 queries, limit 10 (ms)", ""]
    lines.append(f"{'size':>8}  {'path':<24} {'p50':>7} {'p90':>7} {'p99':>7}")
    for r in results:
        for row in r.rows:
            p = [pct(row.times, q) * 1e3 for q in (50, 90, 99)]
            lines.append(f"{r.size:>8}  {row.name:<24} {p[0]:>7.2f} {p[1]:>7.2f} {p[2]:>7.2f}")
    lines += ["", f"Recall requests a second, {CONCURRENT_CLIENTS} concurrent clients", ""]
    lines.append(f"{'size':>8}  {'path':<24} {'req/s':>8}")
    for r in results:
        for name, rate in r.throughput.items():
            lines.append(f"{r.size:>8}  {name:<24} {rate:>8.0f}")
    lines += ["", "Daemon RSS (MB)", ""]
    lines.append(f"{'size':>8}  {'before serve':>13} {'listener open':>14} {'after the load':>15}")
    for r in results:
        mb = [r.rss_kb[k] / 1024 for k in ("before serve", "listener open", "after the load")]
        lines.append(f"{r.size:>8}  {mb[0]:>13.0f} {mb[1]:>14.0f} {mb[2]:>15.0f}")
    p50, p90, loaded = client
    lines += [
        "",
        f"hippoctl: `import hippoctl.cli` cold p50 {p50:.1f} ms, p90 {p90:.1f} ms; "
        f"starlette or uvicorn loaded: {'yes' if loaded else 'no'}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES), help="comma-separated")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each throughput run")
    parser.add_argument("--keep", action="store_true", help="keep the sandboxes")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results = [run_size(size, args.seconds, args.keep) for size in sizes]
    print(render(results, client_figures()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
