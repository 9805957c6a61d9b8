"""Pooled LongMemEval: every session of LongMemEval-S in one store, each question asked of the whole pool.

A user's memory is one store that keeps growing, not a fresh haystack per question. This bench fills
one project store of a real daemon with the pool (one memory per session: its user turns joined with
newlines, prefixed with the session's date, exactly as bench/longmemeval.py stores a session, through
the Remember request), then asks each scored dev question through the Recall request with `strengthen`
off (a question must not change what the next one sees), and prints recall_any@5, recall_all@5 and
recall_any@10 per question type for:

* hippod with no model (the store's embeddings off),
* hippod with the embed extra (hybrid recall; `--no-embed` skips it),
* a plain BM25 over the same texts, computed here: Okapi BM25 (k1 1.2, b 0.75) with the pool's own
  statistics, over lowercase words less English stopwords, unstemmed.

Also the fill rate (memories/s through Remember) and recall p50/p99 over the socket.

`--data` is the folder holding `longmemeval_s_pool.json.xz` and `longmemeval_s_pool_dev_questions.json`.
`--keep DIR` keeps the filled stores in DIR and a later run with the same DIR starts from them, so a
ranking change is measured in minutes (the store is re-indexed on open when its terms change).

Usage: python bench/pooled.py --data DIR [--keep DIR] [--no-embed] [--no-model] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness import BenchError, log, pct
from longmemeval import memory_text, read_list
from qa import UNBUDGETED, QaDaemon, qa_daemon

from hippoctl.protocol import messages as m
from hippod.model.terms import QUERY_STOPWORDS
from hippod.model.tokenize import tokenize

POOL_FILE = "longmemeval_s_pool.json.xz"
QUESTIONS_FILE = "longmemeval_s_pool_dev_questions.json"
TOP_K = 10
PLAIN = "plain BM25"


@dataclass(frozen=True)
class Question:
    qid: str
    qtype: str
    text: str
    answers: frozenset[str]


@dataclass
class Score:
    qtype: str
    any5: bool
    all5: bool
    any10: bool


def load_pool(path: str) -> list[tuple[str, str]]:
    """(session id, memory text) per pooled session with user text, oldest first.

    The file lists sessions by their opaque ids; a user's store receives them as they happen, so
    the bench stores them in the order of their dates (recall reads the order memories were stored
    in: the newest for "latest", the memory stored just before or after a match)."""
    raw = read_list(path, "sessions")
    out = []
    for index, session in enumerate(raw):
        try:
            sid, date, turns = str(session["session_id"]), str(session["date"]), session["user_turns"]
        except (KeyError, TypeError) as exc:
            raise BenchError(f"{path}: session #{index} lacks {exc}") from exc
        text = memory_text(date, "\n".join(str(t) for t in turns))
        if text is not None:
            out.append((_when(date), sid, text))
    return [(sid, text) for _, sid, text in sorted(out, key=lambda item: item[0])]


def _when(date: str) -> str:
    """A sortable form of a LongMemEval date, "2023/05/20 (Sat) 07:47" -> "2023/05/20 07:47"."""
    day, _, rest = date.partition(" (")
    return f"{day} {rest.partition(') ')[2]}"


def load_questions(path: str) -> list[Question]:
    """The scored questions: those with an answer session, abstentions (`_abs`) left out."""
    raw = read_list(path, "questions")
    out = []
    for index, q in enumerate(raw):
        try:
            qid, answers = str(q["question_id"]), frozenset(map(str, q["answer_session_ids"]))
            if qid.endswith("_abs") or not answers:
                continue
            out.append(Question(qid, str(q["question_type"]), str(q["question"]), answers))
        except (KeyError, TypeError) as exc:
            raise BenchError(f"{path}: question #{index} lacks {exc}") from exc
    return out


# --- plain BM25 -------------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return [w for w in tokenize(text) if w not in QUERY_STOPWORDS]


class PlainBM25:
    """Okapi BM25 with the pool's own document frequencies and mean length: the baseline."""

    K1 = 1.2
    B = 0.75

    def __init__(self, docs: Sequence[tuple[str, str]]) -> None:
        self.ids = [sid for sid, _ in docs]
        self.counts = [Counter(_words(text)) for _, text in docs]
        self.lengths = [sum(c.values()) for c in self.counts]
        self.avgdl = sum(self.lengths) / max(len(self.lengths), 1)
        self.postings: dict[str, list[int]] = {}
        for i, counts in enumerate(self.counts):
            for word in counts:
                self.postings.setdefault(word, []).append(i)

    def top(self, query: str, k: int) -> list[str]:
        n = len(self.ids)
        scores: dict[int, float] = {}
        for word, repeats in Counter(_words(query)).items():
            hits = self.postings.get(word, [])
            idf = math.log((n - len(hits) + 0.5) / (len(hits) + 0.5) + 1.0)
            for i in hits:
                tf = self.counts[i][word]
                norm = self.K1 * (1.0 - self.B + self.B * self.lengths[i] / self.avgdl)
                scores[i] = scores.get(i, 0.0) + repeats * idf * tf * (self.K1 + 1.0) / (tf + norm)
        best = sorted(scores, key=lambda i: (-scores[i], self.ids[i]))[:k]
        return [self.ids[i] for i in best]


# --- hippod -----------------------------------------------------------------------------------------


@dataclass
class Run:
    name: str
    scores: list[Score]
    fill_rate: float | None  # memories/s, None when the store came from --keep
    latencies: list[float]


def _score(q: Question, ranked: Sequence[str]) -> Score:
    top5, top10 = set(ranked[:5]), set(ranked[:TOP_K])
    return Score(q.qtype, bool(q.answers & top5), q.answers <= top5, bool(q.answers & top10))


Pool = Sequence[tuple[str, str]]


def _filled(daemon: QaDaemon, pool: Pool, keep: str | None) -> tuple[str, dict[str, str], float | None]:
    """A store holding the pool (from `keep` when it is there): its folder, memory id -> session id,
    and the fill rate (None when it came from `keep`)."""
    kept_store = os.path.join(keep, "plain" if not daemon.embed else "embed") if keep else None
    ids_file = os.path.join(kept_store, "ids.json") if kept_store else None
    if kept_store and ids_file and os.path.exists(ids_file):
        cwd = daemon.new_store(seed=os.path.join(kept_store, ".hippo"))
        with open(ids_file, encoding="utf-8") as handle:
            return cwd, json.load(handle), None
    cwd = daemon.new_store()
    sid_of: dict[str, str] = {}
    start = time.monotonic()
    for done, (sid, text) in enumerate(pool, 1):
        sid_of[daemon.remember(cwd, text)] = sid
        if done % 2000 == 0:
            log(f"filled {done}/{len(pool)} ({done / (time.monotonic() - start):.0f}/s)")
    rate = len(pool) / (time.monotonic() - start)
    daemon.ready(cwd)
    if kept_store and ids_file:
        shutil.rmtree(kept_store, ignore_errors=True)
        os.makedirs(kept_store)
        daemon.snapshot(cwd, os.path.join(kept_store, ".hippo"))
        with open(ids_file, "w", encoding="utf-8") as handle:
            json.dump(sid_of, handle)
    return cwd, sid_of, rate


def run_hippod(pool: Pool, questions: Sequence[Question], embed: bool, keep: str | None) -> Run:
    name = "hippod, embed extra" if embed else "hippod, no model"
    with qa_daemon("pooled", embed) as daemon:
        cwd, sid_of, rate = _filled(daemon, pool, keep)
        log(f"{name}: asking {len(questions)} questions")
        scores, latencies = [], []
        for q in questions:
            start = time.perf_counter()
            ask = m.Recall(query=q.text, limit=TOP_K, budget=UNBUDGETED, min_results=0, strengthen=False)
            data = daemon.call(cwd, ask)
            latencies.append((time.perf_counter() - start) * 1000.0)
            scores.append(_score(q, [sid_of[str(item["id"])] for item in data["results"]]))
    return Run(name, scores, rate, latencies)


def run_plain(pool: Sequence[tuple[str, str]], questions: Sequence[Question]) -> Run:
    index = PlainBM25(pool)
    scores, latencies = [], []
    for q in questions:
        start = time.perf_counter()
        ranked = index.top(q.text, TOP_K)
        latencies.append((time.perf_counter() - start) * 1000.0)
        scores.append(_score(q, ranked))
    return Run(PLAIN, scores, None, latencies)


# --- report -----------------------------------------------------------------------------------------


def _rate(scores: Sequence[Score], flag: Callable[[Score], bool]) -> float:
    return sum(map(flag, scores)) / len(scores) if scores else float("nan")


def render(runs: Sequence[Run]) -> str:
    types = sorted({s.qtype for s in runs[0].scores})
    head = f"{'question_type':<27} {'n':>4}" + "".join(f" | {r.name:^23}" for r in runs)
    sub = f"{'':<27} {'':>4}" + " | any@5   all@5  any@10" * len(runs)
    lines = [head, sub, "-" * len(sub)]
    for qtype in ["overall", *types]:
        row = f"{qtype:<27}"
        for i, r in enumerate(runs):
            group = [s for s in r.scores if qtype == "overall" or s.qtype == qtype]
            if i == 0:
                row += f" {len(group):>4}"
            row += (
                f" | {_rate(group, lambda s: s.any5):.3f}   {_rate(group, lambda s: s.all5):.3f}"
                f"   {_rate(group, lambda s: s.any10):.3f}"
            )
        lines.append(row)
    lines.append("")
    lines.append(f"{'':<20} {'fill (memories/s)':>18} {'recall p50 ms':>14} {'recall p99 ms':>14}")
    for r in runs:
        fill = "-" if r.name == PLAIN else "kept" if r.fill_rate is None else f"{r.fill_rate:.0f}"
        lines.append(f"{r.name:<20} {fill:>18} {pct(r.latencies, 50):>14.1f} {pct(r.latencies, 99):>14.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", required=True, help=f"folder holding {POOL_FILE} and {QUESTIONS_FILE}")
    parser.add_argument("--keep", help="keep the filled stores here, and start from them when they are there")
    parser.add_argument("--no-embed", action="store_true", help="skip hippod with the embed extra")
    parser.add_argument("--no-model", action="store_true", help="skip hippod with no model")
    parser.add_argument("--limit", type=int, help="ask only the first N scored questions")
    args = parser.parse_args(argv)
    try:
        started = time.monotonic()
        pool = load_pool(os.path.join(args.data, POOL_FILE))
        questions = load_questions(os.path.join(args.data, QUESTIONS_FILE))
        if args.limit is not None:
            questions = questions[: args.limit]
        print(f"data: {os.path.realpath(args.data)}")
        print(f"pool: {len(pool)} sessions with user text; questions: {len(questions)} scored")
        runs = [run_plain(pool, questions)]
        if not args.no_model:
            runs.append(run_hippod(pool, questions, False, args.keep))
        if not args.no_embed:
            runs.append(run_hippod(pool, questions, True, args.keep))
        print()
        print(render(runs))
        print()
        print("any@5: an answer session in the top 5; all@5: every one of them; any@10: one in the top 10")
        print(f"runtime: {time.monotonic() - started:.0f} s")
    except BenchError as exc:
        print(f"pooled: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
