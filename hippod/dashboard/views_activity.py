"""The dashboard's activity views: open conflicts side by side, the last sleeps with what each merged
and retired, the token ledger over time, and the search box (recall that strengthens nothing)."""

from __future__ import annotations

from datetime import date, timedelta

import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import RecallItem
from hippoctl.protocol.replies_context import TokensReply
from hippod.base import clock
from hippod.dashboard.calls import DashboardContext, ViewCall, command
from hippod.dashboard.views_memories import snippet
from hippod.model.memory import Memory
from hippod.recall import answer
from hippod.store.sqlite import conflicts as conflict_sql
from hippod.store.sqlite import dashboard_reads as reads
from hippod.store.stores import sqlite_only

SHOWN_CONFLICTS = 50
SHOWN_RUNS = 20
SHOWN_PER_RUN = 5  # merges, and retired memories of each kind, listed for one sleep
SEARCH_LIMIT = 20
TOKEN_DAYS = (7, 30, 90)
RETIRED_LABELS = {
    "dormant_move": "went dormant",
    "decay_delete": "faded and deleted (dormant store off)",
    "decay_delete_secret": "faded and deleted (looked like a secret)",
    "dedupe_delete": "removed as a duplicate",
    "junk_delete": "removed as junk",
}


class Side(msgspec.Struct):
    id: str
    content: str
    layer: str
    strength: float
    retrieval_count: int
    good: int
    bad: int
    created: str
    keep: str  # the command that keeps this side


class ConflictCard(msgspec.Struct):
    id: int
    reason: str
    score: float
    detected_at: str
    sides: list[Side]
    show: str  # the command that shows both sides in a terminal


class Conflicts(msgspec.Struct):
    store: str
    count: int
    rows: list[ConflictCard]


def _side(mem: Memory, keep: str) -> Side:
    return Side(
        id=mem.id,
        content=mem.content,
        layer=mem.layer,
        strength=round(mem.strength_at(clock.now()).strength, 4),
        retrieval_count=mem.retrieval_count,
        good=mem.outcome_positive,
        bad=mem.outcome_negative,
        created=mem.created,
        keep=keep,
    )


async def conflicts(call: ViewCall) -> Conflicts:
    """Open conflicts, each with both memories and the `resolve` command that keeps either."""
    store = await call.store()
    found = await conflict_sql.listing(store.db.reader, call.tenant, "open")
    shown = found[:SHOWN_CONFLICTS]
    ids = [i for c in shown for i in (c.memory_a_id, c.memory_b_id)]
    memories = await reads.memories_by_id(store.db.reader, call.tenant, ids)
    rows = []
    for c in shown:
        sides = [
            _side(memories[i], command(store, "resolve", str(c.id), "--keep", i))
            for i in (c.memory_a_id, c.memory_b_id)
            if i in memories
        ]
        show = command(store, "resolve", str(c.id))
        rows.append(ConflictCard(c.id, c.reason, round(c.score, 2), c.detected_at, sides, show))
    return Conflicts(store.root, len(found), rows)


class Named(msgspec.Struct):
    id: str
    content: str | None  # None: the text is gone (deleted, or restored and changed since)
    detail: str | None = None


class Merge(msgspec.Struct):
    id: str
    content: str
    sources: list[Named]


class RetiredGroup(msgspec.Struct):
    op: str
    label: str
    count: int
    items: list[Named]


class Run(msgspec.Struct):
    ts: str
    counts: dict[str, int]
    merges: list[Merge]
    merges_total: int
    retired: list[RetiredGroup]


class Sleeps(msgspec.Struct):
    store: str
    runs: list[Run]


def _counts(results: dict[str, object]) -> dict[str, int]:
    """The run's figures the page shows, from its recorded results."""
    deduped = results.get("deduped")
    conflicts = results.get("conflicts")
    values = {
        "active": results.get("active", 0),
        "merged": results.get("merged", 0),
        "semantic_created": results.get("semantic_created", 0),
        "dormant_moved": results.get("dormant_moved", 0),
        "removed": results.get("removed", 0),
        "deduped": sum(deduped.values()) if isinstance(deduped, dict) else 0,
        "junk_removed": results.get("junk_removed", 0),
        "new_conflicts": conflicts.get("new", 0) if isinstance(conflicts, dict) else 0,
        "shared": results.get("shared", 0),
    }
    return {k: int(v) if isinstance(v, int | float) else 0 for k, v in values.items()}


def _detail(metadata: dict[str, object]) -> str | None:
    parts = [f"{k} {v}" for k, v in metadata.items() if k in ("strength", "kept", "reason", "overlap")]
    return ", ".join(parts) or None


async def sleeps(call: ViewCall) -> Sleeps:
    """The newest sleeps: their counts, the merged memories each made (with their sources) and the
    memories each retired, a few of each kind."""
    store = await call.store()
    reader = store.db.reader
    runs = await reads.sleep_runs(reader, SHOWN_RUNS)
    times = [r.ts for r in runs]
    merged = await reads.merges_at(reader, call.tenant, times)
    counts, retired = await reads.retired_at(reader, call.tenant, times, tuple(RETIRED_LABELS), SHOWN_PER_RUN)
    sources = [p for mem in merged for p in mem.parents[:SHOWN_PER_RUN]]
    live = await reads.memories_by_id(reader, call.tenant, sources)
    faded = await reads.dormant_contents(reader, call.tenant, [r.target for r in retired])
    out = []
    for run in runs:
        made = [mem for mem in merged if mem.created == run.ts]
        merges = [
            Merge(
                mem.id,
                snippet(mem.content),
                [
                    Named(p, snippet(live[p].content) if p in live else None)
                    for p in mem.parents[:SHOWN_PER_RUN]
                ],
            )
            for mem in made[:SHOWN_PER_RUN]
        ]
        groups = [
            RetiredGroup(
                op,
                label,
                counts[(run.ts, op)],
                [
                    Named(
                        r.target, snippet(faded[r.target]) if r.target in faded else None, _detail(r.metadata)
                    )
                    for r in retired
                    if r.ts == run.ts and r.op == op
                ],
            )
            for op, label in RETIRED_LABELS.items()
            if (run.ts, op) in counts
        ]
        out.append(Run(run.ts, _counts(run.results), merges, len(made), groups))
    return Sleeps(store.root, out)


class Daily(msgspec.Struct):
    day: list[str]
    sent: list[int]
    reread: list[int]
    saved: list[int]


class Tokens(msgspec.Struct):
    days: int
    per_day: Daily
    totals: TokensReply


async def tokens(call: ViewCall) -> Tokens:
    """The token ledger (global store) day by day, and the `tokens` table's totals per surface."""
    days = call.number("days", 30, 1, max(TOKEN_DAYS))
    ctx = call.context(m.Tokens(days=days))
    totals, _ = await call.dispatch(ctx)
    store = sqlite_only(await ctx.global_store(), "the dashboard")
    rows = await reads.ledger_per_day(store.db.reader, call.tenant, totals.since)
    first = date.fromisoformat(totals.since)
    span = [(first + timedelta(days=i)).isoformat() for i in range(days)]
    index = {day: i for i, day in enumerate(span)}
    daily = Daily(span, [0] * days, [0] * days, [0] * days)
    for day, kind, skipped, count in rows:
        i = index.get(day)
        if i is None:
            continue
        column = daily.reread if kind == "reread" else daily.saved if skipped else daily.sent
        column[i] += count
    return Tokens(days, daily, totals)


class Found(msgspec.Struct):
    query: str
    candidates: int
    results: list[RecallItem]


async def search(call: ViewCall) -> Found:
    """Recall through the recall handler, strengthening nothing and putting nothing on the ledger:
    what a person reads on the page is not text handed to an agent."""
    query = call.text("q", 2000) or ""
    body = m.Recall(query=query, limit=SEARCH_LIMIT, budget=1_000_000, strengthen=False)
    ctx: DashboardContext = call.context(body)
    reply, _ = await answer.recall(ctx, body, surface=None)
    return Found(query=query, candidates=reply.candidates, results=reply.results)
