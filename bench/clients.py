"""What clients do against a running daemon: remember loops, socket recalls, `hippoctl recall` processes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

from harness import BenchError, Sandbox, call

from hippoctl.protocol import messages as m

CONCURRENT_CLIENTS = 4
E2E_RUNS = 30
COLD_START_RUNS = 30
WARMUP_RECALLS = 10


def _remember_loop(sb: Sandbox, items: Sequence[tuple[str, list[str]]], errors: list[str]) -> None:
    for content, tags in items:
        reply = call(sb.sock, sb.home, sb.base, m.Remember(content=content, tags=tags))
        if isinstance(reply, m.Error):
            errors.append(f"{reply.code}: {reply.message}")


def remember_concurrent(sb: Sandbox, items: Sequence[tuple[str, list[str]]], clients: int) -> float:
    """Remember items with `clients` threads, each a sequential loop; returns memories per second.

    A loop, because the daemon serves one request per connection (daemon.md §6.8).
    """
    if not items:
        return float("nan")
    errors: list[str] = []
    failures: list[BaseException] = []

    def worker(chunk: Sequence[tuple[str, list[str]]]) -> None:
        try:
            _remember_loop(sb, chunk, errors)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(items[i::clients],)) for i in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    if failures:
        raise BenchError(f"a remember client failed: {failures[0]!r}")
    if errors:
        raise BenchError(f"{len(errors)} remember requests failed, first: {errors[0]}")
    return len(items) / elapsed


def socket_recalls(sb: Sandbox, queries: Sequence[str], gap: float = 0.0) -> tuple[list[float], list[int]]:
    """Recall from this process through the socket: latency and results returned per query.

    With `gap`, that many seconds pass after each reply, as between an agent's prompts: the write a
    recall makes after its reply is then in before the next recall asks (back to back, the next one
    waits for it).
    """
    for q in queries[:WARMUP_RECALLS]:
        call(sb.sock, sb.home, sb.base, m.Recall(query=q))
    times: list[float] = []
    results: list[int] = []
    for q in queries:
        start = time.perf_counter()
        reply = call(sb.sock, sb.home, sb.base, m.Recall(query=q))
        times.append(time.perf_counter() - start)
        if isinstance(reply, m.Error):
            raise BenchError(f"recall failed: {reply.code}: {reply.message}")
        data = reply.data if isinstance(reply.data, dict) else {}
        results.append(len(data.get("results", [])))
        if gap:
            time.sleep(gap)
    return times, results


def time_process(argv: list[str], env: dict[str, str] | None, cwd: str | None) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise BenchError(f"{argv[:4]} exited {done.returncode}: {done.stderr.decode(errors='replace')[:300]}")
    return elapsed


def cold_start(code: str, runs: int = COLD_START_RUNS) -> list[float]:
    argv = [sys.executable, "-c", code]
    time_process(argv, None, None)  # warm the page cache
    return [time_process(argv, None, None) for _ in range(runs)]


def hippoctl_argv() -> list[str]:
    """The installed console script beside this interpreter, else `python -m hippoctl`."""
    script = os.path.join(os.path.dirname(sys.executable), "hippoctl")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "hippoctl"]


def e2e_recalls(sb: Sandbox, queries: Sequence[str], runs: int = E2E_RUNS) -> list[float]:
    """Wall time of fresh `hippoctl recall "<query>" --global` processes."""
    base = hippoctl_argv()

    def argv(q: str) -> list[str]:
        return [*base, "recall", q, "--global"]

    time_process(argv(queries[-1]), sb.env, sb.base)  # warm-up, not counted
    return [time_process(argv(queries[i % len(queries)]), sb.env, sb.base) for i in range(runs)]
