"""Fact extraction bench: what sleep's phase 7 sends and costs, against the local stub of Anthropic's
Messages API (tests/model_stub.py), on a real daemon.

A measuring tool, not a test: it prints a table and asserts nothing. For each store size, N synthetic
memories (the perf bench's Zipf corpus) are remembered into the global store of a fresh sandbox;
then four sleeps run: one with extraction off (the store settles: merges, dedupe, junk), two with it
on (the first and the second sleep that send), and one more with it off (the same settled store, so
the difference is what extraction adds). The stub answers each call at once, or after --latency
seconds (a real call takes about a second), with two facts and the tokens a real call would report:
input ≈ characters of the system prompt and the note / 4, output ≈ characters of the answer / 4.

Usage: python bench/extraction.py [--sizes 100,1000] [--latency 0]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
from typing import Any

from clients import CONCURRENT_CLIENTS, remember_concurrent
from corpus import make_corpus, make_memories
from harness import BenchError, call, kill_all_daemons, log, make_sandbox, start_daemon, stop_daemon

# The stub the tests use: tests/ is not a package, so its folder goes on the path.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from model_stub import ModelStub, anthropic_message  # type: ignore[import-not-found]

from hippoctl.protocol import messages as m

PATH = "/v1/messages"
SEED = 37


class Tally:
    """The tokens the stub reported, summed."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.input = 0
        self.output = 0
        self.lock = threading.Lock()

    def answer(self, request: Any) -> Any:
        note = request["messages"][0]["content"]
        words = note.split()[1:9]
        facts = [" ".join(["The", *words[:4], "matters here."]), " ".join(["We", *words[4:8], "on purpose."])]
        text = json.dumps({"facts": facts})
        tokens = ((len(request["system"]) + len(note)) // 4, len(text) // 4)
        with self.lock:
            self.input += tokens[0]
            self.output += tokens[1]
        if self.latency:
            time.sleep(self.latency)
        return anthropic_message(text, tokens=tokens)


def _config(home: str, enabled: bool) -> None:
    with open(os.path.join(home, "config.json"), "w", encoding="utf-8") as f:
        json.dump(
            {
                "embeddings": {"enabled": False},
                "autoSleep": {"enabled": False},
                "extraction": {"enabled": enabled},
            },
            f,
        )


def run_size(size: int, latency: float) -> list[tuple[Any, ...]]:
    stub = ModelStub()
    tally = Tally(latency)
    stub.serve(PATH, tally.answer)
    sb = make_sandbox(size)
    sb.env.update(stub.env())
    rows: list[tuple[Any, ...]] = []
    proc = start_daemon(sb)
    try:
        remember_concurrent(sb, make_memories(make_corpus(), size, SEED), CONCURRENT_CLIENTS)
        for label, enabled in (("settle (off)", False), ("1st on", True), ("2nd on", True), ("off", False)):
            _config(sb.home, enabled)
            calls, tin, tout = len(stub.requests(PATH)), tally.input, tally.output
            started = time.perf_counter()
            reply = call(sb.sock, sb.home, sb.base, m.Sleep(no_share=True), timeout=1800)
            took = time.perf_counter() - started
            if not isinstance(reply, m.Result):
                raise BenchError(f"sleep failed: {reply}")
            data = reply.data
            rows.append(
                (
                    size,
                    label,
                    len(stub.requests(PATH)) - calls,
                    tally.input - tin,
                    tally.output - tout,
                    data["extracted"],
                    took,
                )
            )
            log(f"{size}: {label} {took:.2f}s")
    finally:
        stop_daemon(proc)
        stub.close()
        shutil.rmtree(sb.base, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the stub waits per call")
    args = parser.parse_args()
    rows: list[tuple[Any, ...]] = []
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            rows += run_size(size, args.latency)
    finally:
        kill_all_daemons()
    print(f"stub latency {args.latency:g} s a call\n")
    print("| episodic memories | sleep | calls | input tokens | output tokens | facts stored | sleep s |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for size, label, calls, tin, tout, facts, took in rows:
        print(f"| {size:,} | {label} | {calls} | {tin:,} | {tout:,} | {facts} | {took:.2f} |")


if __name__ == "__main__":
    main()
