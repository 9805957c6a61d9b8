"""`recall --hops` (recall.md §11): what it costs and what it finds, on a real daemon.

A generated store of `--memories` memories about `--components` made-up components: for each, one
symptom memory (words of its own, and the component's CamelCase name), one fix memory (the name and
the component's file path, none of the symptom's words), one note naming only the file path, and
filler memories naming other components. Each query is a symptom's words: BM25 finds the symptom;
the fix shares an entity with it (one hop), the note shares one with the fix (two hops).

Prints one table: recall latency (p50, p95 over every query, through the socket as hippoctl sends
it, without strengthening, so every run ranks the same store) and how many fixes and notes came back
within the default budget, for --hops 0, 1, 2 and 3.

    python bench/graph_hops.py [--memories 3000] [--components 100] [--queries 100]
"""

from __future__ import annotations

import argparse
import random
import shutil
import time

from harness import BenchError, call, log, make_sandbox, pct, start_daemon, stop_daemon

from hippoctl.protocol import messages as m

SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "de", "fo", "gi", "ho")
HOPS = (0, 1, 2, 3)


def word(rng: random.Random, parts: int = 3) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts))


def corpus(
    rng: random.Random, memories: int, components: int
) -> tuple[list[str], list[tuple[str, str, str]]]:
    """The memories' texts, and per component (query, fix text, note text)."""
    texts: list[str] = []
    cases: list[tuple[str, str, str]] = []
    names = [word(rng).capitalize() + word(rng).capitalize() for _ in range(components)]
    for i, name in enumerate(names):
        path = f"src/{word(rng, 2)}/{word(rng, 2)}_{i}.py"
        symptom = " ".join(word(rng) for _ in range(4))
        texts.append(f"{symptom} shows up whenever {name} runs")
        fix = f"{name} was fixed by a change to {path}"
        note = f"Keep {path} under review"
        texts += [fix, note]
        cases.append((symptom, fix, note))
    while len(texts) < memories:
        name = rng.choice(names)
        texts.append(f"{' '.join(word(rng) for _ in range(6))} about {name}")
    return texts, cases


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=3000)
    parser.add_argument("--components", type=int, default=100)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    texts, cases = corpus(rng, args.memories, args.components)
    cases = cases[: args.queries]
    sb = make_sandbox(args.memories)
    proc = start_daemon(sb)
    try:
        log(f"storing {len(texts)} memories")
        for text in texts:
            reply = call(sb.sock, sb.home, sb.base, m.Remember(content=text))
            if isinstance(reply, m.Error):
                raise BenchError(f"remember: {reply.message}")
        rows = []
        for hops in HOPS:
            took: list[float] = []
            fixes = notes = added = 0
            for query, fix, note in cases:
                started = time.perf_counter()
                reply = call(sb.sock, sb.home, sb.base, m.Recall(query=query, hops=hops, strengthen=False))
                took.append((time.perf_counter() - started) * 1000)
                if isinstance(reply, m.Error):
                    raise BenchError(f"recall: {reply.message}")
                results = reply.data["results"]
                contents = {r["content"] for r in results}
                fixes += fix in contents
                notes += note in contents
                added += sum(r["graph"] is not None for r in results)
            rows.append((hops, pct(took, 50), pct(took, 95), fixes, notes, added / len(cases)))
    finally:
        stop_daemon(proc)
        shutil.rmtree(sb.base, ignore_errors=True)
    shape = "BM25 finds each symptom; its fix is 1 hop away, a note 2"
    print(f"{len(texts)} memories, {len(cases)} queries ({shape})")
    print()
    print("| --hops | p50 (ms) | p95 (ms) | fixes found | notes found | graph additions per recall |")
    print("|---:|---:|---:|---:|---:|---:|")
    n = len(cases)
    for hop, p50, p95, found_fixes, found_notes, per_recall in rows:
        print(f"| {hop} | {p50:.1f} | {p95:.1f} | {found_fixes}/{n} | {found_notes}/{n} | {per_recall:.1f} |")


if __name__ == "__main__":
    main()
