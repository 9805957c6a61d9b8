"""`context`: memory for an agent's prompt (recall.md §9), with the continuity preamble.

Query mode runs the recall pipeline; `*` mode lists every admitted memory by strength. Pinned
injection (`--pinned-only`, the per-prompt hook) is handled elsewhere.

An agent runs `context --auto` once as a task begins, and must get what the store has: a query
derived from the changed paths or the branch (` M app.py` gives `app`) that finds nothing falls back
to `*` mode. Markdown that would be empty says that nothing was found, as recall does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippoctl.protocol.replies_context import (
    ContextEvent,
    ContextHandoff,
    ContextMemory,
    ContextReply,
    ContextSnapshot,
)
from hippoctl.protocol.wording import plural
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.context import layout
from hippod.context.auto_query import auto_query
from hippod.context.isolation import Place, placement
from hippod.context.layout import PREAMBLE_EVENTS
from hippod.continuity import render
from hippod.model import strength as st
from hippod.model.memory import Memory
from hippod.model.secrets import looks_secret
from hippod.model.terms import query_terms
from hippod.recall import ledger_rows, search, strengthen, tombstones
from hippod.recall import render as recall_render
from hippod.recall.budget import fill_budget, tokens
from hippod.recall.merge import merge_results
from hippod.recall.pack import pack
from hippod.recall.score import Scored
from hippod.store.sqlite import continuity
from hippod.store.sqlite.continuity import Event, Handoff, Snapshot
from hippod.store.stores import SqliteStore, Store

DEFAULT_BUDGET = 1500
# ceil(chars / 4) <= 2,500 keeps an additional-context block within its 10,000 characters.
ADDITIONAL_CONTEXT_BUDGET = layout.ADDITIONAL_CONTEXT_CHARS // 4
LOCAL_BUMP = 1.2
NOTHING_FOUND = "No memories found"


@dataclass(slots=True)
class Preamble:
    snapshot: Snapshot | None = None
    handoff: Handoff | None = None
    events: list[Event] = field(default_factory=list)


def _check(body: m.Context) -> None:
    if body.framing not in layout.FRAMINGS:
        raise HippoError("usage", f"--framing must be one of {', '.join(layout.FRAMINGS)}")
    if body.format not in layout.FORMATS:
        raise HippoError("usage", f"--format must be one of {', '.join(layout.FORMATS)}")
    for flag, value in (("--budget", body.budget), ("--limit", body.limit)):
        problem = None if value is None else validate.number_problem(flag, value, 0)
        if problem is not None:
            raise HippoError("usage", problem)
    if body.query is not None:
        problem = validate.query_problem(body.query)
        if problem is not None:
            raise HippoError("usage", problem)


async def context(
    ctx: RequestContext, body: m.Context, *, surface: str = "context"
) -> tuple[ContextReply, str]:
    """The context block in the asked format; nothing at all for a budget of 0 or less. The block
    goes on the token ledger under `surface`."""
    # `--pinned-only` (the per-prompt hook) is dispatched to handlers/pinned.py.
    _check(body)
    if body.budget is not None and body.budget <= 0:
        # Zero token cost: no store is opened, nothing is strengthened or counted.
        return ContextReply(
            mode="query" if body.query else "all", query=body.query, budget=body.budget, tokens=0
        ), ""
    query = body.query
    derived = query is None and body.auto
    if derived:
        query = await auto_query(ctx.request.cwd) or None
    if query is not None and not query_terms(query):
        query = None
    ranking: search.Ranking | None = None
    if query is not None:
        # A session's start waits on this: an API embedder's round trip is left out (words alone).
        recall = m.Recall(query=query, min_results=0, scope=body.scope, mode=search.OFFLINE)
        ranking = await search.rank(ctx, recall)
        project, primary, ranked = ranking.project, ranking.primary, ranking.ranked
    else:
        project, primary, ranked = await _by_strength(ctx, body.scope)
    config = primary.config
    current = project.project if project is not None else ""
    isolation = bool(config.get("contextProjectIsolation", True))
    shown = _shown(ranked, current, isolation=isolation, cross_project=body.cross_project)
    if derived and query is not None and not shown:
        # The derived query is a guess at the task; when it finds nothing, the strongest memories.
        ranking, query = None, None
        project, primary, ranked = await _by_strength(ctx, body.scope)
        shown = _shown(ranked, current, isolation=isolation, cross_project=body.cross_project)
    budget = (
        body.budget if body.budget is not None else int(config.get("defaultContextBudget", DEFAULT_BUDGET))
    )
    mode = "query" if query is not None else "all"
    if budget <= 0:
        return ContextReply(mode=mode, query=query, budget=budget, tokens=0), ""
    if body.format == "additional-context":
        budget = min(budget, ADDITIONAL_CONTEXT_BUDGET)
    preamble = await _preamble(primary, ctx.tenant)
    reply, markdown, taken = _fill(body, mode, query, budget, preamble, shown)
    if ranking is not None and query is not None:
        await strengthen.after_recall(ctx, ranking, taken, query, mode="context")
    text = _formatted(body.format, reply, markdown)
    if text:
        await ledger_rows.queue_sent(ctx, primary, surface=surface, text=text, items=len(reply.memories))
    elif body.format == "markdown":
        text = _nothing_shown(query, len(shown), budget)
    return reply, text


def _nothing_shown(query: str | None, found: int, budget: int) -> str:
    """What markdown says when it shows nothing: that nothing was found, or that the budget is too
    small to show even one of what was."""
    if found and query is not None:
        return recall_render.none_fit(query, found, budget)
    if found:
        return f"{plural(found, 'memory')} found, but a budget of {plural(budget, 'token')} cannot show one"
    return recall_render.no_results(query) if query is not None else NOTHING_FOUND


def _shown(
    ranked: list[Scored], current: str, *, isolation: bool, cross_project: bool
) -> list[tuple[Scored, Place]]:
    """The ranked memories this project may see (recall.md §9.5), each with where it is shown."""
    shown: list[tuple[Scored, Place]] = []
    for item in ranked:
        mem = item.memory
        place = placement(
            mem.origin_project,
            item.source,
            current,
            isolation=isolation,
            cross_project=cross_project,
            is_secret=lambda mem=mem: looks_secret(mem.content, mem.tags),  # type: ignore[misc]
            memory_source=mem.source,
        )
        if place is not Place.HIDDEN:
            shown.append((item, place))
    return shown


async def _by_strength(ctx: RequestContext, scope: str | None) -> tuple[Store | None, Store, list[Scored]]:
    """`*` mode: every admitted memory by live strength, global rows x 1/1.2 (recall.md §9.3)."""
    project, global_ = await ctx.read_stores()
    primary = project if project is not None else global_
    assert primary is not None, "read_stores returns the global store when there is no project store"
    moment = clock.now()
    hidden = await tombstones.of_read(ctx.tenant, project, global_)
    lists: list[list[Scored]] = []
    for store in (project, global_):
        found: list[Scored] = []
        if store is not None:
            admitted = await store.rows.admitted(store.db.reader, ctx.tenant, scope=scope)
            for mem in tombstones.visible(admitted, hidden, _itself):
                parts = mem.strength_at(moment, ctx.state.loss_aversion)
                found.append(Scored(mem, parts.strength, 0.0, 0.0, parts.strength, parts.days, []))
        lists.append(found)
    # Bumping project rows by 1.2 orders them exactly as dividing global rows by 1.2 would.
    ranked = merge_results(lists[0], lists[1], LOCAL_BUMP if project is not None else 1.0)
    return project, primary, ranked


def _itself(memory: Memory) -> Memory:
    return memory


async def _preamble(store: Store, tenant: str) -> Preamble:
    """The active snapshot, its session's latest handoff and last 5 events (recall.md §9.6); none from a
    team store, which keeps no sessions."""
    if not isinstance(store, SqliteStore):
        return Preamble()
    conn = store.db.reader
    snapshot = await continuity.active_snapshot(conn, tenant)
    if snapshot is None or not snapshot.session_id:
        return Preamble(snapshot)
    handoff = await continuity.latest_handoff(conn, tenant, snapshot.session_id)
    events = await continuity.recent_events(
        conn, tenant, session_id=snapshot.session_id, limit=PREAMBLE_EVENTS
    )
    return Preamble(snapshot, handoff, events)


def _entry(item: Scored, place: Place, framing: str) -> ContextMemory:
    mem = item.memory
    entry = ContextMemory(
        id=mem.id,
        source=item.source,
        confidence=mem.confidence,
        aged=st.is_aged(
            pinned=mem.pinned, confidence=mem.confidence, days_since_retrieved=item.retrieved_days
        ),
        tags=list(mem.tags),
        created=mem.created,
        strength=round(item.strength, 6),
        content=mem.content,
        framed="",
        other_project=place is Place.OTHER,
        score=round(item.score, 6),
    )
    entry.framed = layout.framed(entry, framing)
    return entry


def _with_text(entry: ContextMemory, text: str, framing: str, full_chars: int | None = None) -> ContextMemory:
    """The entry showing `text` in place of its content; cut to fit when `full_chars` is given."""
    shown = msgspec.structs.replace(entry, content=text)
    if full_chars is not None:
        shown.truncated, shown.full_chars = True, full_chars
    shown.framed = layout.framed(shown, framing)
    return shown


def _block_cost(block: str) -> int:
    # One token more for the blank line that separates it from the next block.
    return tokens(block) + 1


def _fill(
    body: m.Context,
    mode: str,
    query: str | None,
    budget: int,
    preamble: Preamble,
    shown: list[tuple[Scored, Place]],
) -> tuple[ContextReply, str, list[Scored]]:
    """Fill the budget: preamble parts first, then memories in rank order; returns the reply,
    the markdown and the memories taken."""
    parts: list[tuple[str, str]] = []
    if preamble.snapshot is not None:
        parts.append(("snapshot", layout.snapshot_block(preamble.snapshot)))
    if preamble.handoff is not None:
        parts.append(("handoff", render.handoff_block(preamble.handoff)))
    if preamble.events:
        parts.append(("events", layout.events_block(preamble.events)))
    head = fill_budget([_block_cost(text) for _, text in parts], budget)
    kept = {parts[i][0] for i in head.taken}
    blocks = [parts[i][1] for i in head.taken]

    entries = [_entry(item, place, body.framing) for item, place in shown]
    reserved = head.used + _block_cost(layout.RESERVED_HEADING)
    if any(e.other_project for e in entries):
        reserved += _block_cost(layout.RESERVED_OTHER_HEADING)

    def cost(index: int, content: str) -> int:
        return tokens(layout.bullet(_with_text(entries[index], content, body.framing), body.framing) + "\n")

    ids, contents = [e.id for e in entries], [e.content for e in entries]
    fill = pack(ids, contents, cost, budget, reserved=reserved, limit=body.limit)
    for index, text in fill.cut.items():
        entries[index] = _with_text(
            entries[index], text, body.framing, full_chars=len(entries[index].content)
        )
    bullets = {i: layout.bullet(entries[i], body.framing) for i in fill.taken}
    main = [i for i in fill.taken if not entries[i].other_project]
    other = [i for i in fill.taken if entries[i].other_project]

    def sections(title: str) -> list[str]:
        out: list[str] = []
        if main:
            out.append(layout.section(title, [bullets[i] for i in main]))
        if other:
            out.append(layout.section(layout.other_heading(len(other)), [bullets[i] for i in other]))
        return out

    total = tokens(layout.assemble([*blocks, *sections(layout.RESERVED_HEADING)]))
    markdown = layout.assemble([*blocks, *sections(layout.heading(len(main), total))])
    if not fill.taken:
        total = tokens(markdown)
    snap, handoff = preamble.snapshot, preamble.handoff
    reply = ContextReply(
        mode=mode,
        query=query,
        budget=budget,
        tokens=total,
        snapshot=None
        if snap is None or "snapshot" not in kept
        else ContextSnapshot(snap.task, snap.summary, snap.next_step, snap.session_id, snap.updated_at),
        handoff=None
        if handoff is None or "handoff" not in kept
        else ContextHandoff(
            handoff.id,
            handoff.session_id,
            handoff.summary,
            handoff.next_action,
            handoff.artifacts,
            handoff.created_at,
        ),
        events=[]
        if "events" not in kept
        else [
            ContextEvent(e.event_type, e.content[: layout.EVENT_CHARS], e.created_at) for e in preamble.events
        ],
        memories=[entries[i] for i in [*main, *other]],
    )
    return reply, markdown, [shown[i][0] for i in fill.taken]


def _formatted(fmt: str, reply: ContextReply, markdown: str) -> str:
    """What is printed: the markdown, the reply as JSON, or Claude Code's hook output line."""
    if fmt == "json":
        return msgspec.json.encode(reply).decode()
    if fmt == "additional-context":
        if not markdown:
            return ""
        output = {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": layout.cap(markdown),
            }
        }
        return msgspec.json.encode(output).decode()
    return markdown
