"""Where the cosine floor of hybrid recall goes: the model's cosines of related against unrelated pairs.

A hybrid recall returns a memory that shares no term with the query only when their cosine reaches
`embeddings.cosineFloor`. This bench measures, with the model and the memory texts the retrieval
benches use (bench/locomo.py, bench/longmemeval.py), the cosine of

* related pairs: each question with each of its evidence memories (LoCoMo dialogue turns; LongMemEval
  has_answer user turns, and whole evidence sessions at the session level);
* unrelated pairs: each question with memories of *other* conversations or haystacks (20 drawn per
  question with a fixed seed), which talk about other people and other things;
* same-store pairs, for reference: each question with the other memories of its own conversation or
  haystack (not evidence, but often about the same people and topics, so neither clearly related nor
  unrelated).

It prints percentiles of each distribution, the subset of pairs with no shared query term (the only
pairs the floor decides: a memory with a term match is returned on its BM25 whatever its cosine), and
for a range of floors the share of related pairs kept and of unrelated pairs admitted, and the share
of unrelated questions that would get nothing back from a store of 14 or of 200 unrelated memories
that share no term with them (the cosine-only candidates of recall.md §2.3). The floor is chosen on
short memories (turns), the kind hippod stores: the lowest multiple of 0.05 that admits at most 1% of
the unrelated pairs with no shared term, in each dataset.

Nothing here goes through the daemon: the texts are embedded in-process with the same embedder the
daemon loads (hippod/embed/minilm_model.py). The data is read in place.

Usage: python bench/cosine_floor.py [--locomo PATH] [--longmemeval PATH] [--per-question N] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import locomo
import longmemeval
from harness import BenchError, log, pct

from hippod.embed import vectors
from hippod.embed.service import Embedder, embedding_text
from hippod.model.terms import query_terms, terms
from hippod.store.config import DEFAULT_MODEL

PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
FLOORS = tuple(round(0.05 * i, 2) for i in range(1, 13))
UNRELATED_SHARE = 0.01  # the floor admits at most this share of the unrelated no-term turn pairs
ROUND_TO = 0.05
STORE_SIZES = (14, 200)  # a small store, and the cosine-only candidate pool of recall.md §2.3


@dataclass
class Store:
    """One conversation or haystack: its memories' texts and, per question, its evidence."""

    name: str
    memories: list[str]
    questions: list[tuple[str, set[int]]] = field(default_factory=list)  # (question, evidence indexes)


@dataclass
class Pairs:
    """Cosines of one kind of pair, and whether each pair shares a query term."""

    cosines: list[float] = field(default_factory=list)
    lexical: list[bool] = field(default_factory=list)

    def add(self, cosine: float, shares_term: bool) -> None:
        self.cosines.append(cosine)
        self.lexical.append(shares_term)

    def without_terms(self) -> list[float]:
        return [c for c, lex in zip(self.cosines, self.lexical, strict=True) if not lex]


@dataclass
class Measured:
    related: Pairs = field(default_factory=Pairs)
    unrelated: Pairs = field(default_factory=Pairs)
    same_store: Pairs = field(default_factory=Pairs)
    # Per question and store size: the best cosine among that many unrelated memories sharing no term.
    best_unrelated: dict[int, list[float]] = field(default_factory=dict)


# --- the datasets as the retrieval benches store them ---------------------------------------------


def locomo_stores(path: str) -> list[Store]:
    stores = []
    counts = locomo.CleanCounts()
    for conv in locomo.load(path):
        index = {t.dia_id: i for i, t in enumerate(conv.turns)}
        store = Store(conv.sample_id, [t.text for t in conv.turns])
        for q in conv.questions:
            evidence = locomo.clean_evidence(q.evidence, set(index), counts)
            if evidence:
                store.questions.append((q.text, {index[e] for e in evidence}))
        stores.append(store)
    return stores


def longmemeval_stores(path: str) -> tuple[list[Store], list[Store]]:
    """Turn-level and session-level stores, one each per question (abstention questions left out)."""
    turns, sessions = [], []
    for q in longmemeval.load(path):
        if q.qid.endswith("_abs"):
            continue
        items = longmemeval.turn_memories(q)
        wanted = longmemeval.evidence_turns(q)
        if wanted:
            store = Store(q.qid, [text for text, _ in items])
            store.questions.append((q.question, {i for i, (_, key) in enumerate(items) if key in wanted}))
            turns.append(store)
        whole = longmemeval.session_memories(q)
        store = Store(q.qid, [text for text, _ in whole])
        evidence = {i for i, (_, sid) in enumerate(whole) if sid in q.answer_sessions}
        if evidence:
            store.questions.append((q.question, evidence))
            sessions.append(store)
    return turns, sessions


# --- measuring -------------------------------------------------------------------------------------


class Cosines:
    """Every memory and question of a dataset embedded once; cosines by index."""

    def __init__(self, embedder: Embedder, stores: Sequence[Store]) -> None:
        texts = [embedding_text(text, []) for s in stores for text in s.memories]
        self.offsets: list[int] = []
        at = 0
        for s in stores:
            self.offsets.append(at)
            at += len(s.memories)
        self.memory = vectors.from_blob(b"".join(embedder.embed(texts))).reshape(len(texts), -1)
        self.terms = [set(terms(text)) for text in texts]
        self.embedder = embedder

    def query(self, text: str) -> tuple[vectors.Vector, set[str]]:
        blob = self.embedder.embed([text])[0]
        return vectors.from_blob(blob), set(query_terms(text))


def measure(embedder: Embedder, stores: Sequence[Store], per_question: int, seed: int) -> Measured:
    rng = random.Random(seed)
    table = Cosines(embedder, stores)
    out = Measured()
    total = table.memory.shape[0]
    for number, store in enumerate(stores):
        start = table.offsets[number]
        own = range(start, start + len(store.memories))
        for question, evidence in store.questions:
            vector, words = table.query(question)
            sims = table.memory @ vector
            for i in own:
                shares = bool(words & table.terms[i])
                if i - start in evidence:
                    out.related.add(float(sims[i]), shares)
                else:
                    out.same_store.add(float(sims[i]), shares)
            drawn = 0
            while drawn < per_question and total > len(store.memories):
                i = rng.randrange(total)
                if i in own:
                    continue
                out.unrelated.add(float(sims[i]), bool(words & table.terms[i]))
                drawn += 1
            foreign = [i for i in range(total) if i not in own and not words & table.terms[i]]
            for size in STORE_SIZES:
                if len(foreign) >= size:
                    best = max(float(sims[i]) for i in rng.sample(foreign, size))
                    out.best_unrelated.setdefault(size, []).append(best)
    return out


# --- report ----------------------------------------------------------------------------------------


def _share_at_least(values: Sequence[float], floor: float) -> float:
    return sum(1 for v in values if v >= floor) / len(values) if values else float("nan")


def floor_for(unrelated: Sequence[float]) -> float:
    """The lowest multiple of ROUND_TO that at most UNRELATED_SHARE of `unrelated` reaches."""
    steps = math.ceil(pct(unrelated, 100 * (1 - UNRELATED_SHARE)) / ROUND_TO)
    while _share_at_least(unrelated, steps * ROUND_TO) > UNRELATED_SHARE:
        steps += 1
    return round(steps * ROUND_TO, 2)


def render(name: str, result: Measured) -> list[str]:
    rows = [
        ("related (question, evidence)", result.related.cosines),
        ("  of which no shared term", result.related.without_terms()),
        ("unrelated (other stores)", result.unrelated.cosines),
        ("  of which no shared term", result.unrelated.without_terms()),
        ("same store, not evidence", result.same_store.cosines),
        ("  of which no shared term", result.same_store.without_terms()),
    ]
    head = f"{'pairs':<31} {'n':>7} " + " ".join(f"{'p' + str(p):>6}" for p in PERCENTILES)
    lines = [f"## {name}", head, "-" * len(head)]
    for label, values in rows:
        cells = " ".join(f"{pct(values, p):>6.3f}" for p in PERCENTILES)
        lines.append(f"{label:<31} {len(values):>7} {cells}")
    sizes = [size for size in STORE_SIZES if size in result.best_unrelated]
    columns = [
        "floor",
        "related kept",
        "no-term related kept",
        "unrelated in",
        "no-term unrelated in",
        "same store in",
        *(f"nothing of {size}" for size in sizes),
    ]
    lines += ["", "  ".join(f"{c:>{max(6, len(c))}}" for c in columns)]
    for floor in FLOORS:
        values = [
            _share_at_least(result.related.cosines, floor),
            _share_at_least(result.related.without_terms(), floor),
            _share_at_least(result.unrelated.cosines, floor),
            _share_at_least(result.unrelated.without_terms(), floor),
            _share_at_least(result.same_store.cosines, floor),
            *(1.0 - _share_at_least(result.best_unrelated[size], floor) for size in sizes),
        ]
        shown = [f"{floor:>6.2f}", *(f"{v:>{len(c)}.3f}" for v, c in zip(values, columns[1:], strict=True))]
        lines.append("  ".join(shown))
    lines.append(
        "kept / in: share of pairs whose cosine reaches the floor; nothing of N: share of questions for"
        " which none of N unrelated memories sharing no term with them reaches it"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--locomo", required=True, help="LoCoMo JSON file")
    parser.add_argument("--longmemeval", required=True, help="LongMemEval .json(.xz)")
    parser.add_argument("--per-question", type=int, default=20, help="unrelated memories drawn per question")
    parser.add_argument("--seed", type=int, default=14, help="seed of the draw of unrelated memories")
    args = parser.parse_args(argv)

    started = time.monotonic()
    try:
        from hippod.embed import minilm_model
    except ImportError as exc:
        print(f"cosine_floor: needs the embed extra (pip install 'hippod[embed]'): {exc}", file=sys.stderr)
        return 1
    try:
        embedder = minilm_model.load()
        datasets = [("LoCoMo dev, dialogue turns", locomo_stores(args.locomo))]
        lme_turns, lme_sessions = longmemeval_stores(args.longmemeval)
        datasets += [
            ("LongMemEval-S dev46, user turns", lme_turns),
            ("LongMemEval-S dev46, whole sessions", lme_sessions),
        ]
    except BenchError as exc:
        print(f"cosine_floor: {exc}", file=sys.stderr)
        return 1
    print(f"cosines of {DEFAULT_MODEL} of question-memory pairs, texts as the retrieval benches store them")
    print(f"unrelated: {args.per_question} memories of other stores per question, seed {args.seed}")
    floors: list[tuple[str, float]] = []
    for name, stores in datasets:
        log(f"{name}: {len(stores)} stores, {sum(len(s.memories) for s in stores)} memories")
        result = measure(embedder, stores, args.per_question, args.seed)
        if "turns" in name:
            floors.append((name, floor_for(result.unrelated.without_terms())))
        print()
        print("\n".join(render(name, result)))
    print()
    for name, floor in floors:
        print(
            f"{name}: lowest multiple of {ROUND_TO} admitting <= {UNRELATED_SHARE:.0%}"
            f" of unrelated no-term pairs: {floor:.2f}"
        )
    print(f"floor (the higher): {max(f for _, f in floors):.2f}")
    print(f"runtime: {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
