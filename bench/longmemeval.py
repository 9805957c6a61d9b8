"""LongMemEval retrieval benchmark: does recall bring back the sessions (and turns) that hold the answer?

Follows the official LongMemEval retrieval protocol (xiaowu0162/LongMemEval, src/retrieval): every
question gets its own haystack, indexed at two granularities, each in a fresh project store of one real
daemon, filled with Remember requests and queried with the question through the Recall request, exactly
as `hippoctl remember` and `hippoctl recall` send them (bench/qa.py). There is no benchmark-only path.

* Session level: one memory per haystack session, its user turns joined with newlines, prefixed with the
  session's date ("[2023/05/20 (Sat) 07:47] ..."). Evidence: the question's answer_session_ids.
  Scored: recall_any@5 (some evidence session in the top 5), recall_all@5 and recall_all@10 (all of them).
* Turn level: one memory per user turn, with the same date prefix. Evidence: the user turns marked
  has_answer; questions without any (the answer is in an assistant turn) are left out of this figure.
  Scored: recall_all@5.
* `--budget B` also scores what `hippoctl recall --budget B` (no --limit, default --min-results 1) hands
  an agent at the session level, in another fresh store (a recall strengthens what it returns, so a
  second recall on the same store would not see what an agent sees).

Abstention questions (question_id ending in `_abs`) are excluded, as in the official scoring. The
official script counts as evidence only answer sessions with a has_answer user turn (so a question whose
answer is in an assistant turn has none, and scores recall_all 1 and recall_any 0); the session figures
under that rule are printed on a line of their own, for comparison with published numbers.

Usage: python bench/longmemeval.py --data PATH(.json|.json.xz) [--limit N] [--budget B] [--embed]
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from harness import BenchError, log
from qa import QaDaemon, qa_daemon

from hippoctl.protocol import validate

TOP_K = 10
CLI_MIN_RESULTS = 1  # `hippoctl recall`'s default --min-results

T = TypeVar("T")


# --- data -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    role: str
    content: str
    has_answer: bool


@dataclass(frozen=True)
class Question:
    qid: str
    qtype: str
    question: str
    answer_sessions: frozenset[str]
    session_ids: list[str]
    dates: list[str]
    sessions: list[list[Turn]]


def _field(raw: dict[str, Any], key: str, kind: type[T], where: str) -> T:
    value = raw.get(key)
    if not isinstance(value, kind):
        raise BenchError(f"{where}: field {key!r} is missing or not a {kind.__name__}")
    return value


def _question(raw: Any, index: int) -> Question:
    if not isinstance(raw, dict):
        raise BenchError(f"question #{index} is not an object")
    where = f"question #{index} ({raw.get('question_id')})"
    ids = [str(s) for s in _field(raw, "haystack_session_ids", list, where)]
    dates = [str(d) for d in _field(raw, "haystack_dates", list, where)]
    sessions: list[list[Turn]] = []
    for session in _field(raw, "haystack_sessions", list, where):
        if not isinstance(session, list):
            raise BenchError(f"{where}: a haystack session is not a list of turns")
        turns = []
        for turn in session:
            if not isinstance(turn, dict):
                raise BenchError(f"{where}: a turn is not an object")
            turns.append(
                Turn(str(turn.get("role")), str(turn.get("content") or ""), turn.get("has_answer") is True)
            )
        sessions.append(turns)
    if not len(ids) == len(dates) == len(sessions):
        raise BenchError(f"{where}: haystack ids, dates and sessions differ in length")
    return Question(
        qid=str(_field(raw, "question_id", str, where)),
        qtype=str(_field(raw, "question_type", str, where)),
        question=_field(raw, "question", str, where),
        answer_sessions=frozenset(str(s) for s in _field(raw, "answer_session_ids", list, where)),
        session_ids=ids,
        dates=dates,
        sessions=sessions,
    )


def read_list(path: str, what: str) -> list[Any]:
    """The JSON list in a file (.json, or .json.xz read in place); BenchError naming what is wrong."""
    try:
        if path.endswith(".xz"):
            with lzma.open(path, "rt", encoding="utf-8") as handle:
                raw = json.load(handle)
        else:
            with open(path, encoding="utf-8") as handle:
                raw = json.load(handle)
    except (OSError, lzma.LZMAError, json.JSONDecodeError) as exc:
        raise BenchError(f"cannot read {path}: {exc}") from exc
    if not isinstance(raw, list):
        raise BenchError(f"{path}: expected a list of {what}")
    return raw


def load(path: str) -> list[Question]:
    """Read a LongMemEval file (.json, or .json.xz read in place)."""
    raw = read_list(path, "questions")
    return [_question(q, i) for i, q in enumerate(raw)]


# --- memories ---------------------------------------------------------------------------------------


def memory_text(date: str, body: str) -> str | None:
    """The date-prefixed memory, cut to the 1 MiB content limit; None when there is nothing to store."""
    body = body.strip()
    if not body:
        return None
    text = f"[{date}] {body}"
    # Lone surrogates from JSON escapes cannot be stored as UTF-8.
    data = text.encode("utf-8", "replace")
    if len(data) > validate.MAX_CONTENT_BYTES:
        data = data[: validate.MAX_CONTENT_BYTES]
    text = data.decode("utf-8", "ignore").strip()
    return None if validate.content_problem(text) else text


def session_memories(q: Question) -> list[tuple[str, str]]:
    """(text, session id) per session with user text."""
    out = []
    for sid, date, turns in zip(q.session_ids, q.dates, q.sessions, strict=True):
        text = memory_text(date, "\n".join(t.content for t in turns if t.role == "user"))
        if text is not None:
            out.append((text, sid))
    return out


def turn_memories(q: Question) -> list[tuple[str, tuple[str, int]]]:
    """(text, (session id, index of the turn in its session)) per user turn with text."""
    out = []
    for sid, date, turns in zip(q.session_ids, q.dates, q.sessions, strict=True):
        for index, turn in enumerate(turns):
            if turn.role == "user" and (text := memory_text(date, turn.content)) is not None:
                out.append((text, (sid, index)))
    return out


def evidence_turns(q: Question) -> frozenset[tuple[str, int]]:
    return frozenset(
        (sid, index)
        for sid, turns in zip(q.session_ids, q.sessions, strict=True)
        for index, turn in enumerate(turns)
        if turn.role == "user" and turn.has_answer
    )


def fill(daemon: QaDaemon, items: Sequence[tuple[str, T]]) -> tuple[str, dict[str, T]]:
    """A fresh store holding one memory per item; returns its folder and memory id -> item key."""
    cwd = daemon.new_store()
    keys: dict[str, T] = {}
    for text, key in items:
        mid = daemon.remember(cwd, text)
        if mid in keys:
            raise BenchError(f"the daemon returned memory id {mid} twice")
        keys[mid] = key
    daemon.ready(cwd)
    return cwd, keys


def cli_recall(daemon: QaDaemon, cwd: str, query: str, budget: int) -> list[str]:
    """Memory ids as `hippoctl recall QUERY --budget B` returns them (no limit, --min-results 1)."""
    return daemon.recall(cwd, query, budget=budget, min_results=CLI_MIN_RESULTS)


# --- scoring ----------------------------------------------------------------------------------------


@dataclass
class Score:
    qid: str
    qtype: str
    any5: bool
    all5: bool
    all10: bool
    turn_all5: bool | None  # None: no evidence turn, left out of the turn-level figure
    budget_any: bool | None = None
    budget_all: bool | None = None
    budget_returned: int = 0
    # The official script's rule: evidence sessions are only those with a has_answer user turn, and a
    # question left with none scores recall_all 1 and recall_any 0.
    official_any5: bool = False
    official_all5: bool = False
    official_all10: bool = False


def score_question(daemon: QaDaemon, q: Question, budget: int | None) -> Score:
    evidence = set(q.answer_sessions)
    cwd, sid_of = fill(daemon, session_memories(q))
    ranked = [sid_of[i] for i in daemon.recall(cwd, q.question, limit=TOP_K)]
    top5, top10 = set(ranked[:5]), set(ranked[:10])

    turn_all5: bool | None = None
    wanted = evidence_turns(q)
    if wanted:
        cwd_t, turn_of = fill(daemon, turn_memories(q))
        turns = [turn_of[i] for i in daemon.recall(cwd_t, q.question, limit=TOP_K)]
        turn_all5 = wanted <= set(turns[:5])

    score = Score(q.qid, q.qtype, bool(evidence & top5), evidence <= top5, evidence <= top10, turn_all5)
    official = {sid for sid, _ in wanted} & evidence
    score.official_any5 = bool(official & top5)
    score.official_all5, score.official_all10 = official <= top5, official <= top10
    if budget is not None:
        cwd_b, sid_b = fill(daemon, session_memories(q))
        ids = cli_recall(daemon, cwd_b, q.question, budget)
        got = {sid_b[i] for i in ids}
        score.budget_any = bool(evidence & got)
        score.budget_all = evidence <= got
        score.budget_returned = len(ids)
    return score


# --- report -----------------------------------------------------------------------------------------


def _rate(flags: Sequence[bool | None]) -> tuple[float, int]:
    scored = [f for f in flags if f is not None]
    return (sum(scored) / len(scored) if scored else float("nan")), len(scored)


def render(scores: Sequence[Score], budget: int | None) -> str:
    groups: list[tuple[str, list[Score]]] = [("overall", list(scores))]
    for qtype in sorted({s.qtype for s in scores}):
        groups.append((qtype, [s for s in scores if s.qtype == qtype]))
    head = (
        f"{'question_type':<27} {'n':>4} {'any@5':>7} {'all@5':>7} {'all@10':>7} {'n_turn':>7} {'turn@5':>7}"
    )
    if budget is not None:
        head += f" {'any@B':>7} {'all@B':>7} {'mem@B':>7}"
    lines = [head, "-" * len(head)]
    for name, group in groups:
        turn, n_turn = _rate([s.turn_all5 for s in group])
        line = (
            f"{name:<27} {len(group):>4} {_rate([s.any5 for s in group])[0]:>7.3f}"
            f" {_rate([s.all5 for s in group])[0]:>7.3f} {_rate([s.all10 for s in group])[0]:>7.3f}"
            f" {n_turn:>7} {turn:>7.3f}"
        )
        if budget is not None:
            mean = sum(s.budget_returned for s in group) / len(group)
            line += (
                f" {_rate([s.budget_any for s in group])[0]:>7.3f}"
                f" {_rate([s.budget_all for s in group])[0]:>7.3f} {mean:>7.1f}"
            )
        lines.append(line)
    lines.append(
        "any@5, all@5, all@10: session recall_any@5, recall_all@5, recall_all@10 (unbudgeted top 10);"
        " turn@5: turn recall_all@5 over the n_turn questions with evidence turns"
    )
    lines.append(
        "official-script evidence rule (answer sessions with a has_answer user turn; none: all=1, any=0):"
        f" any@5={_rate([s.official_any5 for s in scores])[0]:.3f}"
        f" all@5={_rate([s.official_all5 for s in scores])[0]:.3f}"
        f" all@10={_rate([s.official_all10 for s in scores])[0]:.3f}"
    )
    if budget is not None:
        lines.append(
            f"any@B, all@B: session recall_any / recall_all within what `recall --budget {budget}` returns;"
            " mem@B: mean memories returned"
        )
    return "\n".join(lines)


def misses(scores: Sequence[Score]) -> str:
    """The question ids each session figure misses, to compare two runs question by question."""
    lines = []
    for name, flag in (("any@5", "any5"), ("all@5", "all5"), ("all@10", "all10"), ("turn@5", "turn_all5")):
        missed = [s.qid for s in scores if getattr(s, flag) is False]
        lines.append(f"missed {name}: {' '.join(missed) or '-'}")
    return "\n".join(lines)


def summary(scores: Sequence[Score], budget: int | None, embed: bool) -> str:
    name = "longmemeval[embed]" if embed else "longmemeval"
    line = (
        f"{name} session recall_any@5={_rate([s.any5 for s in scores])[0]:.3f}"
        f" recall_all@5={_rate([s.all5 for s in scores])[0]:.3f}"
        f" recall_all@10={_rate([s.all10 for s in scores])[0]:.3f}"
        f" turn recall_all@5={_rate([s.turn_all5 for s in scores])[0]:.3f}"
    )
    if budget is not None:
        mean = sum(s.budget_returned for s in scores) / max(len(scores), 1)
        line += (
            f" budget{budget} recall_any={_rate([s.budget_any for s in scores])[0]:.3f}"
            f" recall_all={_rate([s.budget_all for s in scores])[0]:.3f} memories={mean:.1f}"
        )
    return line + f" n={len(scores)}"


# --- main -------------------------------------------------------------------------------------------


def run(questions: Sequence[Question], budget: int | None, embed: bool) -> list[Score]:
    scores = []
    start = time.monotonic()
    with qa_daemon("longmemeval", embed) as daemon:
        for done, q in enumerate(questions, 1):
            scores.append(score_question(daemon, q, budget))
            if done % 10 == 0 or done == len(questions):
                log(f"{done}/{len(questions)} questions ({time.monotonic() - start:.0f} s)")
    return scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", required=True, help="LongMemEval .json or .json.xz")
    parser.add_argument("--limit", type=int, help="score only the first N questions (after exclusions)")
    parser.add_argument("--budget", type=int, help="also score `recall --budget B` at the session level")
    parser.add_argument("--embed", action="store_true", help="hybrid recall with the hippod[embed] extra")
    parser.add_argument("--misses", action="store_true", help="also list the questions each figure misses")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be 1 or more")
    if args.budget is not None and args.budget < 0:
        parser.error("--budget must be 0 or more")

    try:
        started = time.monotonic()
        everything = load(args.data)
        questions = [q for q in everything if not q.qid.endswith("_abs")]
        abstained = len(everything) - len(questions)
        if args.limit is not None:
            questions = questions[: args.limit]
        no_turns = sum(1 for q in questions if not evidence_turns(q))
        unreachable = sum(
            1 for q in questions if not q.answer_sessions <= {sid for _, sid in session_memories(q)}
        )
        print(f"data: {os.path.realpath(args.data)}")
        counts = f"{len(everything)} in the file, {abstained} abstention (_abs) excluded"
        print(f"questions: {counts}, {len(questions)} scored")
        print(f"turn level: {no_turns} questions have no has_answer user turn and are left out of it")
        if unreachable:
            print(f"session level: {unreachable} questions have an evidence session with no user text")
        log(f"{len(questions)} questions from {args.data}")
        print(f"recall: {'hybrid (embed extra)' if args.embed else 'no model'}")
        scores = run(questions, args.budget, args.embed)
        print()
        print(render(scores, args.budget))
        if args.misses:
            print()
            print(misses(scores))
        print()
        print(f"runtime: {time.monotonic() - started:.0f} s")
        print(summary(scores, args.budget, args.embed))
    except BenchError as exc:
        print(f"longmemeval: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
