"""Spool replay bench: how long a starting daemon takes to replay 1,000 spooled hook requests.

This is a measuring tool, not a test: it prints a plain-text table and asserts nothing about time.

While no daemon runs, it writes `count` capture-error spool files (real PostToolUseFailure payloads,
each with an error of its own shape, so every one is stored) with the client's own spool writer, and
times a sample of real `hippoctl capture-error` processes spooling with HIPPO_NO_SPAWN=1. Then it
starts a real daemon on the sandbox's HIPPO_HOME and measures the time from launch until the spool
folder is empty, checks that every request landed exactly once, and reports the per-file rate.

Usage: python bench/ingest_spool.py [--count 1000] [--client-sample 20] [--keep] [--tmpdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

from harness import BenchError, kill_all_daemons, log, make_sandbox, start_daemon, stop_daemon

from hippoctl.protocol import spool

REPLAY_WAIT = 600.0


@dataclass
class SpoolBenchResult:
    """What one run measured."""

    files: int
    write_seconds: float  # writing every file in-process with the client's writer
    client_ms: list[float]  # wall time of each sampled `hippoctl capture-error` that spooled
    ready_seconds: float  # launch to the daemon answering Ping
    replay_seconds: float  # launch to an empty spool folder
    stored: int  # memories in the store afterwards
    logged: int  # tool_failures rows afterwards

    @property
    def per_file_ms(self) -> float:
        return 1000.0 * self.replay_seconds / self.files if self.files else 0.0

    @property
    def rate(self) -> float:
        return self.files / self.replay_seconds if self.replay_seconds else 0.0


def word(i: int) -> str:
    """Letters g-p only, so that errors differ in shape: the shape hash folds digits, and runs of
    8 or more hex letters (a-f) as well."""
    return "".join(chr(ord("g") + int(d)) for d in f"{i:06d}")


def payload(i: int) -> dict[str, object]:
    """A Claude Code PostToolUseFailure payload with an error of its own."""
    return {
        "session_id": f"bench-session-{i % 7}",
        "transcript_path": "/home/u/.claude/projects/-home-u-proj/bench.jsonl",
        "cwd": "/home/u/proj",
        "permission_mode": "default",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": f"pytest tests/test_{word(i)}.py", "description": "Run one test file"},
        "tool_use_id": f"toolu_{i:08d}",
        "error": f"Exit code 1\nE   ModuleNotFoundError: No module named '{word(i)}'",
        "is_interrupt": False,
    }


def _pending(root: str) -> int:
    return spool.count(spool.spool_root(root))[0]


def _client_sample(env: dict[str, str], cwd: str, count: int) -> list[float]:
    """Run real hook processes with no daemon: each must exit 0 and leave one spool file."""
    times = []
    for i in range(count):
        text = json.dumps(payload(10_000_000 + i))
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "hippoctl", "capture-error"],
            input=text.encode(),
            env=env,
            cwd=cwd,
            capture_output=True,
            timeout=60,
        )
        times.append(1000.0 * (time.perf_counter() - start))
        if done.returncode != 0 or done.stdout or done.stderr:
            raise BenchError(f"hippoctl capture-error: exit {done.returncode}, {done.stderr!r}")
    return times


def spool_replay_bench(
    count: int = 1000, client_sample: int = 20, parent: str = "/tmp", keep: bool = False
) -> SpoolBenchResult:
    """Spool `count` requests with no daemon running, start one, and time the replay."""
    sb = make_sandbox(count, parent)
    log(f"spool bench: sandbox {sb.base}")
    try:
        home = sb.home
        client_ms = _client_sample(sb.env, sb.base, client_sample)
        start = time.perf_counter()
        for i in range(count - client_sample):
            document = spool.SpoolFile(
                v=spool.VERSION,
                kind="capture-error",
                created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                cwd=sb.base,
                env={},
                argv=["capture-error"],
                stdin=payload(i),
            )
            spool.write(home, spool.new_name(), document)
        write_seconds = time.perf_counter() - start
        if _pending(home) != count:
            raise BenchError(f"expected {count} spool files, found {_pending(home)}")
        log(f"spool bench: {count} files spooled; starting the daemon")
        launch = time.perf_counter()
        proc = start_daemon(sb)
        ready = time.perf_counter() - launch
        deadline = time.monotonic() + REPLAY_WAIT
        while _pending(home) and time.monotonic() < deadline:
            time.sleep(0.01)
        replay = time.perf_counter() - launch
        left = _pending(home)
        stop_daemon(proc)
        if left:
            raise BenchError(f"{left} spool files still pending after {REPLAY_WAIT:g} s")
        conn = sqlite3.connect(f"file:{os.path.join(home, 'hippo.db')}?mode=ro", uri=True)
        try:
            stored = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
            logged = conn.execute("SELECT count(*) FROM tool_failures").fetchone()[0]
        finally:
            conn.close()
        return SpoolBenchResult(count, write_seconds, client_ms, ready, replay, stored, logged)
    finally:
        kill_all_daemons()
        if not keep:
            shutil.rmtree(sb.base, ignore_errors=True)


def render(result: SpoolBenchResult) -> str:
    """A plain-text table of one run."""
    client = result.client_ms
    rows = [
        ("spooled hook requests", f"{result.files}"),
        ("hippoctl capture-error, no daemon (median / max)",
         f"{statistics.median(client):.0f} / {max(client):.0f} ms ({len(client)} runs)" if client else "-"),
        ("writing the other files in-process", f"{result.write_seconds:.2f} s"),
        ("daemon launch to first answer", f"{result.ready_seconds:.2f} s"),
        ("daemon launch to empty spool", f"{result.replay_seconds:.2f} s"),
        ("replay rate", f"{result.rate:.0f} files/s ({result.per_file_ms:.2f} ms per file)"),
        ("memories stored / failures logged", f"{result.stored} / {result.logged}"),
    ]  # fmt: skip
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--client-sample", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the sandbox folder")
    parser.add_argument("--tmpdir", default="/tmp")
    args = parser.parse_args()
    result = spool_replay_bench(args.count, min(args.client_sample, args.count), args.tmpdir, args.keep)
    print(render(result))
    if result.stored != result.files or result.logged != result.files:
        print("MISMATCH: every spooled request should be stored and logged exactly once", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
