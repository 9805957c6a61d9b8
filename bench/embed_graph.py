"""The model's two graphs side by side: the shipped one (int8 weights turned to float32 on every run)
and the int8 one built from it (embed/requantize.py), as the daemon loads each (embed/minilm_model.py).

Speed and memory: each graph in a fresh process of its own (HIPPO_EMBED_GRAPH=shipped for the shipped
one), ROUNDS times, alternating, so both meet the same load on the machine; the best round of each is
printed. A round loads the model, embeds SHORT memories of the perf corpus (a sentence each) and then
LONG texts of about 600 tokens (three windows each), and reports texts/s of each, its RSS after the
load, after embedding, and its peak (VmHWM). The vectors of both graphs for the same texts are
compared: the mean and least cosine between them.

Quality (optional): bench/locomo.py and bench/longmemeval.py, each run with `--embed` once per graph
through its own daemons, their summary figures and the difference.

Prints tables and asserts nothing. Usage: python bench/embed_graph.py [--rounds 2]
[--locomo PATH] [--longmemeval PATH] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
from corpus import TEXT_SEED, make_corpus, make_memories
from harness import log

GRAPHS = ("shipped", "int8")
SHORT = 600
LONG = 20
HERE = os.path.dirname(os.path.abspath(__file__))


def _status_mb(key: str) -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def measure(out: str) -> None:
    """In a fresh process: load the graph HIPPO_EMBED_GRAPH names, embed, write figures and vectors."""
    from hippod.embed import minilm_model

    texts = [text for text, _ in make_memories(make_corpus(), SHORT, TEXT_SEED)]
    long_texts = [" ".join(texts[i : i + 45]) for i in range(0, 45 * LONG, 45)]
    started = time.perf_counter()
    embedder = minilm_model.load()
    load_s = time.perf_counter() - started
    loaded = _status_mb("VmRSS")
    started = time.perf_counter()
    blobs = embedder.embed(texts)
    short_s = time.perf_counter() - started
    started = time.perf_counter()
    blobs += embedder.embed(long_texts)
    long_s = time.perf_counter() - started
    np.save(out + ".npy", np.stack([np.frombuffer(b, dtype="<f4") for b in blobs]))
    figures = {
        "rows": embedder.rows,
        "load_s": load_s,
        "short": len(texts) / short_s,
        "long": len(long_texts) / long_s,
        "loaded": loaded,
        "after": _status_mb("VmRSS"),
        "peak": _status_mb("VmHWM"),
    }
    with open(out + ".json", "w", encoding="utf-8") as handle:
        json.dump(figures, handle)


def _round(graph: str, scratch: str) -> dict[str, float]:
    out = os.path.join(scratch, graph)
    env = dict(os.environ, HIPPO_EMBED_GRAPH=graph)
    subprocess.run([sys.executable, __file__, "--measure", out], env=env, check=True)
    with open(out + ".json", encoding="utf-8") as handle:
        figures: dict[str, float] = json.load(handle)
    return figures


def _quality(script: str, data: str, graph: str, limit: int | None) -> dict[str, float]:
    """The summary figures of one retrieval bench run with `--embed` on `graph`."""
    command = [sys.executable, os.path.join(HERE, script), "--data", data, "--embed"]
    if limit:
        command += ["--limit", str(limit)]
    env = dict(os.environ, HIPPO_EMBED_GRAPH=graph)
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    last = [line for line in done.stdout.splitlines() if "[embed]" in line][-1]
    return {key: float(value) for key, value in re.findall(r"(\S+?)=([0-9.]+)", last) if key != "n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--locomo", help="LoCoMo data file, to compare retrieval quality")
    parser.add_argument("--longmemeval", help="LongMemEval data file, to compare retrieval quality")
    parser.add_argument("--limit", type=int, help="questions per quality bench (a quick run)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        measure(args.measure)
        return 0
    best: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for number in range(args.rounds):
            for graph in GRAPHS:
                log(f"round {number + 1}: {graph}")
                got = _round(graph, scratch)
                if graph not in best or got["short"] > best[graph]["short"]:
                    best[graph] = got
        shipped = np.load(os.path.join(scratch, "shipped.npy"))
        int8 = np.load(os.path.join(scratch, "int8.npy"))
    agreement = (shipped * int8).sum(axis=1)
    header = (
        "| graph | windows a run | load s | short texts/s | long texts/s | RSS loaded MB | RSS after MB |"
    )
    print(header + " peak MB |")
    print("|---|---|---|---|---|---|---|---|")
    for graph in GRAPHS:
        f = best[graph]
        print(
            f"| {graph} | {f['rows']:.0f} | {f['load_s']:.1f} | {f['short']:.0f} | {f['long']:.1f}"
            f" | {f['loaded']:.0f} | {f['after']:.0f} | {f['peak']:.0f} |"
        )
    print(
        f"\ncosine between the two graphs' vectors of the same {len(agreement)} texts:"
        f" mean {agreement.mean():.4f}, least {agreement.min():.4f}"
    )
    for script, data in (("locomo.py", args.locomo), ("longmemeval.py", args.longmemeval)):
        if not data:
            continue
        figures = {}
        for graph in GRAPHS:
            log(f"{script} --embed on the {graph} graph")
            figures[graph] = _quality(script, data, graph, args.limit)
        print(f"\n{script} --embed{f' --limit {args.limit}' if args.limit else ''}")
        print("| figure | shipped | int8 | difference |")
        print("|---|---|---|---|")
        for key, value in figures["shipped"].items():
            other = figures["int8"].get(key, float("nan"))
            print(f"| {key} | {value:.3f} | {other:.3f} | {other - value:+.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
