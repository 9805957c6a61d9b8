"""Daemon start: how long a new daemon takes to answer, and the CPU one short daemon life costs.

Each run makes a new sandbox, starts `python -m hippod run`, waits until it answers a Ping, sends
one Remember and one Recall (an agent's first calls), and stops it. A client that starts its daemon
waits the "answers" time (polled every 50 ms: differences under that are noise); the test suite
starts hundreds of daemons and pays the CPU time for each. The daemon is this checkout's (its folder
first on PYTHONPATH); `--daemon-path` adds another checkout's, run interleaved with it so both see
the same machine load. A measuring tool, not a test: it prints a table and asserts nothing about
time.

Usage: python bench/daemon_start.py [--runs 20] [--daemon-path DIR] [--tmpdir /tmp]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

from harness import BenchError, call, kill_all_daemons, make_sandbox, pct, start_daemon, stop_daemon

from hippoctl.protocol import messages as m

HERE = str(Path(__file__).resolve().parents[1])


def _children_cpu() -> float:
    """User and system seconds of every child reaped so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_life(daemon_path: str, tmpdir: str) -> tuple[float, float]:
    """(seconds until the new daemon answered, CPU seconds of its whole life)."""
    sb = make_sandbox(0, tmpdir)
    sb.env["PYTHONPATH"] = daemon_path
    try:
        cpu = _children_cpu()
        started = time.perf_counter()
        proc = start_daemon(sb)
        answered = time.perf_counter() - started
        try:
            first_calls = (m.Remember(content="the staging deploy needs the vpn"), m.Recall(query="staging"))
            for body in first_calls:
                if not isinstance(call(sb.sock, sb.home, sb.base, body), m.Result):
                    raise BenchError(f"{type(body).__name__} failed")
        finally:
            stop_daemon(proc)
        return answered, _children_cpu() - cpu
    finally:
        shutil.rmtree(sb.base, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--daemon-path", help="PYTHONPATH of a second daemon to compare: another checkout")
    parser.add_argument("--tmpdir", default="/tmp")
    args = parser.parse_args()
    kinds = {"this checkout": HERE}
    if args.daemon_path:
        kinds[args.daemon_path] = args.daemon_path
    answers: dict[str, list[float]] = {kind: [] for kind in kinds}
    cpus: dict[str, list[float]] = {kind: [] for kind in kinds}
    try:
        for path in kinds.values():
            one_life(path, args.tmpdir)  # warm the page cache
        for _ in range(args.runs):
            for kind, path in kinds.items():
                answered, cpu = one_life(path, args.tmpdir)
                answers[kind].append(answered)
                cpus[kind].append(cpu)
    finally:
        kill_all_daemons()  # one that never answered
    print(f"daemon start, {args.runs} runs each, interleaved")
    print(f"{'daemon':<40}  {'answers p50 (ms)':>16}  {'p90':>6}  {'CPU per life p50 (ms)':>21}")
    for kind in kinds:
        print(
            f"{kind:<40}  {pct(answers[kind], 50) * 1000:>16.0f}  {pct(answers[kind], 90) * 1000:>6.0f}"
            f"  {statistics.median(cpus[kind]) * 1000:>21.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
