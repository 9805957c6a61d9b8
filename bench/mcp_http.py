"""MCP over HTTP beside `hippoctl mcp` and the REST route, and the dead letters' replay rate.

A measuring tool, not a test: it prints plain-text tables and asserts nothing about time.

One sandbox's global store is filled with --size memories through the socket; the listener opens and
a member key is made. Then, on the perf bench's 200 queries (limit 10):

* `tools/call hippo_recall` through POST /mcp, the SDK's streamable-HTTP client, one session;
* the same call through `hippoctl mcp` (the SDK's stdio client on `python -m hippoctl mcp`), one session;
* `GET /v1/memories?q=&limit=10` through one keep-alive httpx client;
* the first POST /mcp after the listener opens (it loads the MCP SDK into the daemon).

Then --letters signed Slack deliveries from a workspace no tenant is mapped to go to the dead letters;
the workspace is mapped and `slack dlq replay` is timed (every letter ingested), then again (nothing
left); beside it the same number of live deliveries.

Usage: python bench/mcp_http.py [--size 2000] [--letters 1000] [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable, Sequence

import httpx
import httpx2
from clients import CONCURRENT_CLIENTS, remember_concurrent
from corpus import TEXT_SEED, make_corpus, make_memories, make_queries
from harness import (
    BenchError,
    Sandbox,
    call,
    kill_all_daemons,
    log,
    make_sandbox,
    pct,
    start_daemon,
    stop_daemon,
)
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from hippoctl.protocol import messages as m

LIMIT = 10
WARMUP = 10
SECRET = "bench-signing-secret"


def _ok(reply: m.Result | m.Error, what: str) -> m.Result:
    if not isinstance(reply, m.Result):
        raise BenchError(f"{what} failed: {reply.code}: {reply.message}")
    return reply


async def _timed(queries: Sequence[str], run: Callable[[str], Awaitable[None]]) -> list[float]:
    for query in queries[:WARMUP]:
        await run(query)
    times = []
    for query in queries:
        start = time.perf_counter()
        await run(query)
        times.append(time.perf_counter() - start)
    return times


async def _recall_over(session: ClientSession, query: str) -> None:
    result = await session.call_tool("hippo_recall", {"query": query, "limit": LIMIT})
    if result.is_error:
        raise BenchError(f"hippo_recall failed: {result.content}")


async def mcp_figures(sb: Sandbox, url: str, key: str, queries: Sequence[str]) -> dict[str, list[float]]:
    rows: dict[str, list[float]] = {}
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as client:
        start = time.perf_counter()
        async with (
            streamable_http_client(f"{url}/mcp", http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            rows["first POST /mcp (initialize, SDK loaded)"] = [time.perf_counter() - start]
            rows["POST /mcp tools/call hippo_recall"] = await _timed(
                queries, lambda q: _recall_over(session, q)
            )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "hippoctl", "mcp"], env=sb.env, cwd=sb.base
    )
    with open(os.path.join(sb.base, "mcp.err"), "w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            rows["hippoctl mcp (stdio) tools/call hippo_recall"] = await _timed(
                queries, lambda q: _recall_over(session, q)
            )
    with httpx.Client(base_url=url, headers=headers, timeout=60) as rest:

        async def get(query: str) -> None:
            answer = rest.get("/v1/memories", params={"q": query, "limit": LIMIT})
            if answer.status_code != 200:
                raise BenchError(f"GET /v1/memories answered {answer.status_code}")

        rows["GET /v1/memories"] = await _timed(queries, get)
    return rows


def _slack(event_id: str, text: str, ts: str, team: str) -> tuple[bytes, dict[str, str]]:
    payload = {
        "type": "event_callback",
        "team_id": team,
        "event_id": event_id,
        "event": {
            "type": "message",
            "channel": "C0BENCH01",
            "channel_type": "channel",
            "user": "U0B",
            "text": text,
            "ts": ts,
        },
    }
    raw = json.dumps(payload).encode()
    stamp = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), b"v0:" + stamp.encode() + b":" + raw, hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
    }
    return raw, headers


def _deliveries(
    client: httpx.Client, count: int, event: str, text: str, ts: str, team: str, expected: str
) -> float:
    """Send `count` signed Slack messages from `team`, each answered `expected`; deliveries a second."""
    start = time.perf_counter()
    for n in range(count):
        raw, headers = _slack(
            f"{event}{n}", f"{text} number {n} about the build cache", f"{ts}{n:06d}.0001", team
        )
        status = client.post("/v1/connectors/slack/events", content=raw, headers=headers).json()["status"]
        if status != expected:
            raise BenchError(f"a delivery from {team} answered {status}, not {expected}")
    return count / (time.perf_counter() - start)


def replay_figures(sb: Sandbox, url: str, letters: int) -> dict[str, float]:
    db = os.path.join(sb.home, "hippo.db")
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO slack_workspaces VALUES ('T0KNOWN01', 'default', '2026-01-01T00:00:00Z')")
    figures: dict[str, float] = {}
    with httpx.Client(base_url=url, timeout=60) as client:
        figures["deliveries to the dead letters /s"] = _deliveries(
            client, letters, "EvDead", "Dead letter", "1700", "T0STRANGER", "dlq"
        )
        figures["live deliveries ingested /s"] = _deliveries(
            client, letters, "EvLive", "Live message", "1800", "T0KNOWN01", "ingested"
        )
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO slack_workspaces VALUES ('T0STRANGER', 'default', '2026-01-01T00:00:00Z')")
    start = time.perf_counter()
    done = _ok(call(sb.sock, sb.home, sb.base, m.DeadLetterReplay(source="slack"), timeout=600), "replay")
    took = time.perf_counter() - start
    if done.data["counts"] != {"ingested": letters}:
        raise BenchError(f"replay counts {done.data['counts']}")
    figures["dead letters replayed /s"] = letters / took
    figures["replay of all letters (s)"] = took
    start = time.perf_counter()
    again = _ok(call(sb.sock, sb.home, sb.base, m.DeadLetterReplay(source="slack"), timeout=600), "replay")
    figures["second replay, nothing left (ms)"] = (time.perf_counter() - start) * 1e3
    if again.data["letters"]:
        raise BenchError("a second replay found letters")
    return figures


def render(size: int, rows: dict[str, list[float]], replay: dict[str, float], letters: int) -> str:
    lines = [f"Recall round trip, {size} memories, 200 queries, limit {LIMIT} (ms)", ""]
    lines.append("| path | p50 | p90 | p99 |")
    lines.append("|---|---:|---:|---:|")
    for name, times in rows.items():
        p = [pct(times, q) * 1e3 for q in (50, 90, 99)]
        lines.append(f"| {name} | {p[0]:.2f} | {p[1]:.2f} | {p[2]:.2f} |")
    lines += ["", f"Dead letters, {letters} Slack deliveries", "", "| figure | value |", "|---|---:|"]
    lines += [f"| {name} | {value:,.1f} |" for name, value in replay.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=2000, help="memories in the store")
    parser.add_argument("--letters", type=int, default=1000, help="dead letters to replay")
    parser.add_argument("--keep", action="store_true", help="keep the sandbox")
    args = parser.parse_args(argv)
    corpus = make_corpus()
    queries = make_queries(corpus)
    sb = make_sandbox(args.size)
    sb.env.update(HIPPO_V1_RPS="0", SLACK_SIGNING_SECRET=SECRET)
    try:
        proc = start_daemon(sb)
        remember_concurrent(sb, make_memories(corpus, args.size, TEXT_SEED + args.size), CONCURRENT_CLIENTS)
        url = _ok(call(sb.sock, sb.home, sb.base, m.Serve(port=0)), "serve").data["url"]
        key = _ok(call(sb.sock, sb.home, sb.base, m.AuthCreate(role="member", label="bench")), "auth").data
        log(f"listening on {url}")
        rows = asyncio.run(mcp_figures(sb, url, key["plaintext"], queries))
        replay = replay_figures(sb, url, args.letters)
        stop_daemon(proc)
    finally:
        kill_all_daemons()
        if not args.keep:
            shutil.rmtree(sb.base, ignore_errors=True)
    print(render(args.size, rows, replay, args.letters))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
