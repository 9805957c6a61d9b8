"""Lifecycle bench: does the store forget what is wrong and keep what is right over months of use?

One store is used by a scripted agent for SPAN_DAYS, one step a week. Each step restarts the daemon
with HIPPO_FAKE_NOW at that week (the clock is read at start), does that week's events through the
real socket, and ends with a `sleep`, as the daily run would. There are three kinds of topics, each
with a probe query and BACKGROUND related memories that also match the probe and compete with it:

* changed: a fact stored in week 0 changes in a later week; the new version supersedes the old;
* wrong: a wrong fact is stored first, the right one later; each week the agent runs the probe and,
  when the wrong one is in its top 5, marks it `outcome --bad --id`;
* kept: a valid fact, recalled by its probe every few weeks.

At the end every probe is asked once (`recall --limit 5`) and the bench prints:

* trap persistence: share of changed topics whose old version, or wrong topics whose wrong fact, is
  still in the top 5 of its probe;
* current-version@5: share of changed topics whose newest version is in the top 5;
* retained@5: share of kept topics whose fact is in the top 5.

Each figure is run with every mechanism on, then with one switched off at a time, the way a user
would: decay off (the store's `defaultHalfLifeDays` set to 10^9 in config.json, so nothing fades),
outcome marks ignored (the agent never sends them) and supersession ignored (the new version is a
plain `remember`).

Usage: python bench/lifecycle.py [--topics N] [--weeks N]; prints a table, asserts nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from harness import BenchError, Sandbox, call, kill_all_daemons, log, make_sandbox, start_daemon, stop_daemon

from hippoctl.protocol import messages as m

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
BACKGROUND = 6
KEPT_EVERY_WEEKS = 3
SEED = 7

ADJECTIVES = (
    "amber basalt cobalt dune ember fjord garnet harbor indigo jasper kelp lumen marble nectar onyx".split()
)
NOUNS = "ledger relay beacon vault forge quarry signal anchor compass lantern harvest orchard turbine".split()
ASPECTS = [
    ("port", "listens on port {n}"),
    ("timeout", "request timeout is {n} seconds"),
    ("owner", "owner is team {w}"),
    ("region", "runs in region {w}-{n}"),
    ("retries", "retries failed calls {n} times"),
]
FILLER = [
    "logs are shipped to the central collector",
    "deploys go out on tuesday mornings",
    "has a dashboard in the ops folder",
    "alerts page the on-call engineer",
    "keeps a changelog in the repo root",
    "uses feature flags for risky changes",
    "was load tested last quarter",
    "stores secrets in the team vault",
    "has a runbook for incidents",
    "exports metrics every minute",
]
WORDS = "north south alpha delta orion lyra vega nova atlas zephyr".split()


@dataclass
class Topic:
    kind: str  # changed, wrong or kept
    subject: str
    aspect: str
    probe: str
    first: str  # changed: the old version; wrong: the wrong fact; kept: the fact
    second: str = ""  # changed: the new version; wrong: the right fact
    change_week: int = 0
    ids: dict[str, str] = field(default_factory=dict)


def make_topics(count: int, weeks: int, rng: random.Random) -> list[Topic]:
    subjects = [f"{a} {n}" for a in ADJECTIVES for n in NOUNS]
    rng.shuffle(subjects)
    topics = []
    for i in range(count):
        subject = subjects[i]
        aspect, template = ASPECTS[i % len(ASPECTS)]

        def fact(template: str = template) -> str:
            return template.format(n=rng.randint(2, 9999), w=rng.choice(WORDS))

        kind = ("changed", "wrong", "kept")[i % 3]
        first = f"The {subject} service {fact()}"
        second = f"The {subject} service {fact()}" if kind != "kept" else ""
        topics.append(
            Topic(
                kind,
                subject,
                aspect,
                f"{subject} {aspect}",
                first,
                second,
                rng.randint(2, max(2, weeks // 2)),
            )
        )
    return topics


@dataclass(frozen=True)
class Mode:
    name: str
    decay: bool = True
    outcomes: bool = True
    supersede: bool = True


MODES = [
    Mode("all mechanisms on"),
    Mode("decay off", decay=False),
    Mode("outcome marks ignored", outcomes=False),
    Mode("supersession ignored", supersede=False),
]


class Agent:
    """The scripted user of one store, talking to the daemon of the current week."""

    def __init__(self, sb: Sandbox) -> None:
        self.sb = sb
        self.proc: Any = None

    def at(self, moment: datetime) -> None:
        """Restart the daemon with its clock at `moment`."""
        if self.proc is not None:
            stop_daemon(self.proc)
        env = dict(self.sb.env, HIPPO_FAKE_NOW=moment.isoformat().replace("+00:00", "Z"))
        self.proc = start_daemon(dataclasses.replace(self.sb, env=env))

    def stop(self) -> None:
        if self.proc is not None:
            stop_daemon(self.proc)
            self.proc = None

    def ask(self, body: m.Body) -> Any:
        reply = call(self.sb.sock, self.sb.home, self.sb.base, body, timeout=120.0)
        if isinstance(reply, m.Error):
            raise BenchError(f"{type(body).__name__} failed: {reply.code}: {reply.message}")
        return reply.data

    def remember(self, text: str) -> str:
        return str(self.ask(m.Remember(content=text))["id"])

    def top5(self, query: str) -> list[str]:
        return [str(r["id"]) for r in self.ask(m.Recall(query=query, limit=5, budget=10_000_000))["results"]]


@dataclass
class Figures:
    trap: float
    current: float
    retained: float
    sleep_seconds: float


def run_mode(mode: Mode, topics: Sequence[Topic], weeks: int) -> Figures:
    sb = make_sandbox(len(topics))
    # make_sandbox turns embeddings off: the figures are those of the default recall.
    config = {"embeddings": {"enabled": False}}
    if not mode.decay:
        config["defaultHalfLifeDays"] = 10**9  # type: ignore[assignment]
    with open(os.path.join(sb.home, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    agent = Agent(sb)
    topics = [dataclasses.replace(t, ids={}) for t in topics]
    sleep_seconds = 0.0
    try:
        for week in range(weeks + 1):
            agent.at(START + timedelta(weeks=week))
            for t in topics:
                _week(agent, mode, t, week)
            started = time.perf_counter()
            agent.ask(m.Sleep())
            sleep_seconds += time.perf_counter() - started
        agent.at(START + timedelta(weeks=weeks, days=3))
        traps = current = kept = 0
        changed_or_wrong = [t for t in topics if t.kind != "kept"]
        for t in topics:
            top = agent.top5(t.probe)
            if t.kind in ("changed", "wrong"):
                traps += t.ids["first"] in top
            if t.kind == "changed":
                current += t.ids["second"] in top
            if t.kind == "kept":
                kept += t.ids["first"] in top
    finally:
        agent.stop()
        shutil.rmtree(sb.base, ignore_errors=True)
    n_changed = sum(t.kind == "changed" for t in topics)
    n_kept = sum(t.kind == "kept" for t in topics)
    return Figures(
        traps / max(1, len(changed_or_wrong)),
        current / max(1, n_changed),
        kept / max(1, n_kept),
        sleep_seconds,
    )


def _week(agent: Agent, mode: Mode, t: Topic, week: int) -> None:
    if week == 0:
        for filler in FILLER[:BACKGROUND]:
            agent.remember(f"The {t.subject} service {filler}; see the {t.aspect} notes")
        t.ids["first"] = agent.remember(t.first)
        return
    if t.kind == "changed" and week == t.change_week:
        if mode.supersede:
            t.ids["second"] = str(agent.ask(m.Supersede(id=t.ids["first"], content=t.second))["new"])
        else:
            t.ids["second"] = agent.remember(t.second)
    elif t.kind == "wrong":
        if week == t.change_week:
            t.ids["second"] = agent.remember(t.second)
        if mode.outcomes and t.ids["first"] in agent.top5(t.probe):
            agent.ask(m.Outcome(good=False, id=t.ids["first"]))
    elif t.kind == "kept" and week % KEPT_EVERY_WEEKS == 0:
        agent.top5(t.probe)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--topics", type=int, default=60, help="topics (a third of each kind)")
    parser.add_argument("--weeks", type=int, default=26, help="weeks of simulated use")
    args = parser.parse_args(argv)
    if args.topics < 3 or args.weeks < 4:
        parser.error("use at least 3 topics and 4 weeks")
    topics = make_topics(args.topics, args.weeks, random.Random(SEED))
    rows = []
    try:
        for mode in MODES:
            log(f"{mode.name}: {args.topics} topics over {args.weeks} weeks")
            rows.append((mode, run_mode(mode, topics, args.weeks)))
    except BenchError as exc:
        print(f"lifecycle: {exc}", file=sys.stderr)
        return 1
    finally:
        kill_all_daemons()
    print(
        f"{args.topics} topics ({args.topics // 3} each changed / wrong / kept), "
        f"{BACKGROUND} related memories each, {args.weeks} weeks, a sleep every week\n"
    )
    print("| mechanisms | trap persistence | current-version@5 | retained@5 | time in sleep (s) |")
    print("|---|---|---|---|---|")
    for mode, f in rows:
        print(f"| {mode.name} | {f.trap:.1%} | {f.current:.1%} | {f.retained:.1%} | {f.sleep_seconds:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
