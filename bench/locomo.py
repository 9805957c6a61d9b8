"""LoCoMo evidence retrieval: does recall bring back the dialogue turns a question's answer rests on?

For each conversation of a LoCoMo file, a fresh project store is made through a real daemon (bench/qa.py),
and every dialogue turn goes in as one memory through the Remember request, as `hippoctl remember` sends it:
"[<session date>] <speaker>: <text>" (plus " [image: <caption>]" when the turn shared a picture), with
artifact_ref "locomo://<sample_id>/<dia_id>". Every question then goes through the Recall request,
unbudgeted, top 10, exactly as `hippoctl recall --limit 10` sends it; there is no benchmark-only ranking.

Evidence ids are cleaned with the rule `D:?(\\d+):0*(\\d+)` -> "D<a>:<b>" (every match in the string
counts, so "D8:6; D9:17" gives two ids), ids that are not dia_ids of the conversation are dropped, and
questions left with no evidence are skipped. Metrics per question: evidence recall@k, the fraction of its
evidence turns in the top k, and hit@5, whether any is in the top 5; averaged overall and per category.

The data file is CC BY-NC: it is read in place and nothing of it is copied into the repository.

With `--distractors STORE` (a store folder, e.g. one `bench/perf.py --keep` filled with 100,000
synthetic memories), every conversation goes into one copy of that store instead, so each question's
evidence competes with the other conversations' turns and all of that store's memories: retrieval
quality at the size of a large store.

Usage: python bench/locomo.py --data PATH [--limit N] [--conversations N] [--embed] [--distractors STORE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness import BenchError, log, pct
from qa import QaDaemon, qa_daemon

EVIDENCE_RE = re.compile(r"D:?(\d+):0*(\d+)")
SESSION_RE = re.compile(r"session_(\d+)")
RECALL_LIMIT = 10
KS = (5, 10)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


@dataclass
class Turn:
    dia_id: str
    text: str


@dataclass
class Question:
    text: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]


@dataclass
class CleanCounts:
    """What evidence cleaning did, over the questions looked at."""

    questions: int = 0
    skipped_no_evidence: int = 0
    evidence_raw: int = 0
    rewritten: int = 0
    unparseable: int = 0
    nonexistent: int = 0
    duplicates: int = 0
    nonexistent_examples: list[str] = field(default_factory=list)
    rewritten_examples: list[str] = field(default_factory=list)


@dataclass
class Score:
    sample_id: str
    category: int
    recall: dict[int, float]
    hit5: float


# --- loading ---------------------------------------------------------------------------------------


def _turn_text(date: str, turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    if caption:
        text += f" [image: {caption}]"
    return f"[{date}] {text}" if date else text


def parse_conversation(raw: dict[str, Any]) -> Conversation:
    sample_id = str(raw["sample_id"])
    conv = raw["conversation"]
    sessions: list[tuple[int, str]] = []
    for key, value in conv.items():
        match = SESSION_RE.fullmatch(key)
        if match and isinstance(value, list):
            sessions.append((int(match.group(1)), key))
    turns: list[Turn] = []
    for _, key in sorted(sessions):
        date = str(conv.get(f"{key}_date_time") or "")
        for turn in conv[key]:
            turns.append(Turn(str(turn["dia_id"]), _turn_text(date, turn)))
    questions = [
        Question(str(q["question"]), int(q["category"]), [str(e) for e in q.get("evidence") or []])
        for q in raw.get("qa") or []
    ]
    return Conversation(sample_id, turns, questions)


def load(path: str) -> list[Conversation]:
    try:
        with open(path, encoding="utf-8") as handle:
            raw = json.load(handle)
    except (OSError, json.JSONDecodeError) as exc:
        raise BenchError(f"cannot read the LoCoMo file {path}: {exc}") from exc
    if not isinstance(raw, list):
        raise BenchError(f"{path}: expected a list of conversations, got {type(raw).__name__}")
    try:
        return [parse_conversation(item) for item in raw]
    except (KeyError, TypeError, ValueError) as exc:
        raise BenchError(f"{path}: not in the LoCoMo layout ({type(exc).__name__}: {exc})") from exc


# --- evidence cleaning -----------------------------------------------------------------------------


def clean_evidence(raw: Sequence[str], dia_ids: set[str], counts: CleanCounts) -> list[str]:
    """Canonical evidence dia_ids that exist in the conversation, in order, without duplicates."""
    out: list[str] = []
    for item in raw:
        counts.evidence_raw += 1
        ids = [f"D{a}:{b}" for a, b in EVIDENCE_RE.findall(item)]
        if not ids:
            counts.unparseable += 1
            continue
        if ids != [item]:
            counts.rewritten += 1
            if len(counts.rewritten_examples) < 5:
                counts.rewritten_examples.append(f"{item!r} -> {', '.join(ids)}")
        for dia_id in ids:
            if dia_id not in dia_ids:
                counts.nonexistent += 1
                if len(counts.nonexistent_examples) < 5:
                    counts.nonexistent_examples.append(dia_id)
            elif dia_id in out:
                counts.duplicates += 1
            else:
                out.append(dia_id)
    return out


# --- running ---------------------------------------------------------------------------------------


def fill_store(daemon: QaDaemon, conv: Conversation, store: str | None = None) -> tuple[str, dict[str, str]]:
    """One memory per turn, in a fresh store unless `store` is given; (its cwd, memory id -> dia_id)."""
    store = store or daemon.new_store()
    by_memory: dict[str, str] = {}
    for turn in conv.turns:
        memory_id = daemon.remember(store, turn.text, artifact_ref=f"locomo://{conv.sample_id}/{turn.dia_id}")
        if memory_id in by_memory:
            raise BenchError(f"{conv.sample_id}: {turn.dia_id} got the id of {by_memory[memory_id]}")
        by_memory[memory_id] = turn.dia_id
    daemon.ready(store)
    return store, by_memory


def score(ranked: Sequence[str], evidence: Sequence[str]) -> tuple[dict[int, float], float]:
    wanted = set(evidence)
    recall = {k: len(wanted.intersection(ranked[:k])) / len(wanted) for k in KS}
    return recall, 1.0 if wanted.intersection(ranked[:5]) else 0.0


@dataclass
class Run:
    scores: list[Score] = field(default_factory=list)
    counts: CleanCounts = field(default_factory=CleanCounts)
    conversations: int = 0
    memories: int = 0
    fill_seconds: float = 0.0
    recall_ms: list[float] = field(default_factory=list)


def run(convs: Sequence[Conversation], limit: int | None, embed: bool, distractors: str | None = None) -> Run:
    result = Run()
    with qa_daemon("locomo", embed) as daemon:
        shared = daemon.new_store(seed=distractors) if distractors else None
        for conv in convs:
            if limit is not None and len(result.scores) >= limit:
                break
            dia_ids = {t.dia_id for t in conv.turns}
            todo: list[tuple[Question, list[str]]] = []
            for q in conv.questions:
                if limit is not None and len(result.scores) + len(todo) >= limit:
                    break
                result.counts.questions += 1
                evidence = clean_evidence(q.evidence, dia_ids, result.counts)
                if evidence:
                    todo.append((q, evidence))
                else:
                    result.counts.skipped_no_evidence += 1
            if not todo:
                continue
            start = time.perf_counter()
            store, by_memory = fill_store(daemon, conv, shared)
            filled = time.perf_counter() - start
            result.fill_seconds += filled
            result.conversations += 1
            result.memories += len(conv.turns)
            for q, evidence in todo:
                t0 = time.perf_counter()
                ids = daemon.recall(store, q.text, limit=RECALL_LIMIT)
                result.recall_ms.append((time.perf_counter() - t0) * 1e3)
                # Another conversation's turn, or a distractor, is evidence of nothing here.
                ranked = [by_memory.get(i, "-") for i in ids]
                recall, hit5 = score(ranked, evidence)
                result.scores.append(Score(conv.sample_id, q.category, recall, hit5))
            log(
                f"{conv.sample_id}: {len(conv.turns)} turns stored in {filled:.1f} s, "
                f"{len(todo)} questions recalled in {time.perf_counter() - start - filled:.1f} s"
            )
    return result


# --- report ----------------------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _row(label: str, scores: Sequence[Score]) -> str:
    r5 = _mean([s.recall[5] for s in scores])
    r10 = _mean([s.recall[10] for s in scores])
    h5 = _mean([s.hit5 for s in scores])
    return f"{label:<16} {len(scores):>5}  {r5:>9.3f}  {r10:>10.3f}  {h5:>6.3f}"


def render(result: Run, data: str, seconds: float, embed: bool) -> str:
    c = result.counts
    mode = "hybrid (embed extra)" if embed else "no model"
    lines = [
        f"LoCoMo evidence retrieval, {mode}: {os.path.normpath(data)}",
        f"{result.conversations} conversations, {result.memories} turns stored (one memory each, "
        f"{result.fill_seconds:.1f} s); recall top {RECALL_LIMIT} unbudgeted, socket p50 "
        f"{pct(result.recall_ms, 50):.1f} ms, p95 {pct(result.recall_ms, 95):.1f} ms; total {seconds:.1f} s",
        "",
        f"questions: {c.questions} looked at, {c.skipped_no_evidence} skipped for no evidence, "
        f"{len(result.scores)} scored",
        f"evidence ids: {c.evidence_raw} raw, {c.rewritten} cleaned/rewritten, {c.unparseable} dropped as "
        f"unparseable, {c.nonexistent} dropped as nonexistent, {c.duplicates} duplicates merged",
    ]
    if c.rewritten_examples:
        lines.append(f"  rewritten, e.g.: {'; '.join(c.rewritten_examples)}")
    if c.nonexistent_examples:
        lines.append(f"  nonexistent, e.g.: {', '.join(c.nonexistent_examples)}")
    lines += ["", f"{'category':<16} {'n':>5}  {'recall@5':>9}  {'recall@10':>10}  {'hit@5':>6}"]
    lines.append(f"{'-' * 16} {'-' * 5}  {'-' * 9}  {'-' * 10}  {'-' * 6}")
    lines.append(_row("overall", result.scores))
    for cat in sorted({s.category for s in result.scores}):
        label = f"{cat} {CATEGORIES.get(cat, '?')}"
        lines.append(_row(label, [s for s in result.scores if s.category == cat]))
    lines.append("")
    s = result.scores
    lines.append(
        f"locomo{'[embed]' if embed else ''} evidence_recall@5={_mean([x.recall[5] for x in s]):.3f} "
        f"recall@10={_mean([x.recall[10] for x in s]):.3f} hit@5={_mean([x.hit5 for x in s]):.3f} n={len(s)}"
    )
    return "\n".join(lines)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", required=True, help="LoCoMo JSON file (e.g. locomo_dev.json)")
    parser.add_argument("--limit", type=_positive, help="score at most N questions in all (quick run)")
    parser.add_argument("--conversations", type=_positive, help="use only the first N conversations")
    parser.add_argument("--embed", action="store_true", help="hybrid recall with the hippod[embed] extra")
    parser.add_argument(
        "--distractors", metavar="STORE", help="put every conversation in one copy of this store folder"
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    try:
        convs = load(args.data)
        if args.conversations is not None:
            convs = convs[: args.conversations]
        log(f"{len(convs)} conversations from {args.data}")
        result = run(convs, args.limit, args.embed, args.distractors)
    except BenchError as exc:
        print(f"locomo: {exc}", file=sys.stderr)
        return 1
    if not result.scores:
        print("locomo: no question had evidence to score", file=sys.stderr)
        return 1
    print(render(result, args.data, time.perf_counter() - started, args.embed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
