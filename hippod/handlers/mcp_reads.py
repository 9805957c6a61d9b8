"""The MCP tools that read memory text for an agent (integrations.md §11): recall (optionally with
the continuity preamble), context, assemble, drill and predict_baserate.

Recall and context run the verbs' own handlers; every block handed to the agent goes on the token
ledger under the surface `mcp` (continuity.md §7).
"""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import RecallReply
from hippoctl.protocol.replies_context import ContextReply
from hippoctl.protocol.replies_mcp import (
    AssembledItem,
    AssembleReply,
    BaserateReply,
    DrillItem,
    DrillReply,
)
from hippoctl.protocol.replies_pinned import PinnedReply
from hippod.base.errors import HippoError
from hippod.context import layout
from hippod.continuity import render
from hippod.handlers import context as context_handler
from hippod.handlers import pinned
from hippod.lifecycle.lookup import find_memory
from hippod.mcp import args as a
from hippod.mcp import assemble as asm
from hippod.mcp import baserate, drill
from hippod.mcp.request import McpContext, for_tool
from hippod.model.memory import Memory
from hippod.recall import answer, ledger_rows
from hippod.recall.budget import fill_budget, tokens
from hippod.store.sqlite import continuity, traces
from hippod.store.stores import SqliteStore, Store, sqlite_only

SURFACE = "mcp"
DEFAULT_BUDGET = 4000
# A session's items read for hippo_assemble: far more than any budget shows in full.
MAX_SESSION_ITEMS = 1000
# Parents met while drilling, at most: a merged memory has a few dozen.
MAX_DRILL_NODES = 1000


def _default_budget(store: Store) -> int:
    return int(store.config.get("defaultBudget", DEFAULT_BUDGET))


async def _preamble(store: SqliteStore, tenant: str, session_id: str | None) -> list[str]:
    """The continuity preamble as `context` prints it (recall.md §9.6): the active snapshot, then the
    latest handoff and last events of its session, or of `session_id` when one is given."""
    conn = store.db.reader
    snapshot = await continuity.active_snapshot(conn, tenant)
    blocks: list[str] = []
    if snapshot is not None and session_id in (None, snapshot.session_id):
        blocks.append(layout.snapshot_block(snapshot))
    session = session_id or (snapshot.session_id if snapshot is not None else None)
    if session:
        handoff = await continuity.latest_handoff(conn, tenant, session)
        if handoff is not None:
            blocks.append(render.handoff_block(handoff))
        events = await continuity.recent_events(
            conn, tenant, session_id=session, limit=layout.PREAMBLE_EVENTS
        )
        if events:
            blocks.append(layout.events_block(events))
    return blocks


async def recall(ctx: McpContext, args: a.RecallArgs) -> tuple[RecallReply, str]:
    """`recall`, with the continuity preamble first (inside the same budget) when asked for."""
    body = m.Recall(query=args.query, budget=args.budget, limit=args.limit, scope=args.scope)
    if not args.include_continuity:
        return await answer.recall(ctx, body, surface=SURFACE)
    project, global_ = await ctx.read_stores()
    read = project if project is not None else global_
    assert read is not None, "read_stores returns the global store when there is no project store"
    primary = sqlite_only(read, "the MCP tool hippo_recall with include_continuity")
    budget = args.budget if args.budget is not None else _default_budget(primary)
    blocks = await _preamble(primary, ctx.tenant, args.session_id)
    # Each block costs one token more for the blank line after it, as in `context`.
    head = fill_budget([tokens(b) + 1 for b in blocks], budget)
    body.budget = max(0, budget - head.used)
    reply, found = await answer.recall(ctx, body, surface=None)
    text = layout.assemble([*(blocks[i] for i in head.taken), found])
    await ledger_rows.queue_sent(ctx, primary, surface=SURFACE, text=text, items=len(reply.results))
    return reply, text


async def context(ctx: McpContext, args: a.ContextArgs) -> tuple[ContextReply | PinnedReply, str]:
    body = m.Context(query=args.query, budget=args.budget, scope=args.scope, pinned_only=args.pinned_only)
    if args.pinned_only:
        # No session: the per-prompt hook's skip-while-unchanged is for prompts, and an agent that
        # asks for the block gets it every time.
        return await pinned.pinned_context(for_tool(ctx, None), body, surface=SURFACE)
    return await context_handler.context(ctx, body, surface=SURFACE)


async def assemble(ctx: McpContext, args: a.AssembleArgs) -> tuple[AssembleReply, str]:
    """One session's events and handoffs, newest in full, older as bullets, within the budget."""
    store = sqlite_only(await ctx.target_store(write=False), "the MCP tool hippo_assemble")
    conn, limit = store.db.reader, MAX_SESSION_ITEMS
    events = await continuity.session_events(conn, ctx.tenant, args.session_id, scope=args.scope, limit=limit)
    handoffs = await continuity.session_handoffs(
        conn, ctx.tenant, args.session_id, scope=args.scope, limit=limit
    )
    found = asm.items(events, handoffs)[-limit:]
    done = asm.assemble(
        args.session_id,
        found,
        budget=args.budget,
        fresh_tail_count=args.fresh_tail_count,
        summarize_older=args.summarize_older,
    )
    shown = done.full + done.summarized
    if shown:
        await ledger_rows.queue_sent(ctx, store, surface=SURFACE, text=done.text, items=shown)
    reply = AssembleReply(
        session_id=args.session_id,
        budget=args.budget,
        tokens=tokens(done.text),
        total=done.total,
        full=done.full,
        summarized=done.summarized,
        left_out=done.left_out,
        items=[
            AssembledItem(
                kind="event" if item.rank == 0 else "handoff",
                id=item.row_id,
                created_at=item.created_at,
                text=text,
                full=whole,
            )
            for item, text, whole in done.shown
        ],
    )
    return reply, done.text


async def _walk(store: Store, tenant: str, merged: Memory, depth: int) -> list[drill.Node]:
    """The parents below `merged`, depth first in `parents` order, each row visited once."""
    nodes: list[drill.Node] = []
    seen = {merged.id}

    async def visit(ids: list[str], level: int) -> None:
        rows = {r.id: r for r in await store.rows.get_many(store.db.reader, ids) if r.tenant_id == tenant}
        for parent_id in ids:
            if len(nodes) >= MAX_DRILL_NODES or parent_id in seen:
                continue
            seen.add(parent_id)
            row = rows.get(parent_id)
            text = None if row is None else render.first_line(row.content)
            nodes.append(drill.Node(parent_id, level, text))
            if row is not None and row.parents and level < depth:
                await visit(row.parents, level + 1)

    await visit(merged.parents, 1)
    return nodes


async def drill_down(ctx: McpContext, args: a.DrillArgs) -> tuple[DrillReply, str]:
    store, merged = await find_memory(ctx, args.summary_id)
    if not merged.parents:
        raise HippoError(
            "not_merged",
            f"{merged.id} is not a merged memory (it has no parents to drill into)",
            hint="pass the id of a memory made by sleep's merge (sem_…)",
        )
    nodes = await _walk(store, ctx.tenant, merged, args.depth)
    budget = args.budget if args.budget is not None else _default_budget(store)
    done = drill.render(
        merged.id, len(merged.parents), merged.content, nodes, limit=args.limit, budget=budget
    )
    if done.listed:
        await ledger_rows.queue_sent(ctx, store, surface=SURFACE, text=done.text, items=len(done.listed))
    reply = DrillReply(
        id=merged.id,
        depth=args.depth,
        tokens=tokens(done.text),
        parents=[DrillItem(n.id, n.depth, n.line) for n in done.listed],
        left_out=done.left_out,
    )
    return reply, done.text


async def predict_baserate(ctx: McpContext, args: a.BaserateArgs) -> tuple[BaserateReply, str]:
    """Outcomes of the tag's traces in the project and global stores; a trace shared to the global
    store (same text) is counted once."""
    project, global_ = await ctx.read_stores()
    outcomes: list[str | None] = []
    seen: set[str] = set()  # digests of the stores read before this one
    for read in (project, global_):
        if read is None:
            continue
        store = sqlite_only(read, "the MCP tool hippo_predict_baserate")
        rows = await traces.outcomes_with_tag(store.db.reader, ctx.tenant, args.class_tag)
        outcomes += [outcome for digest, outcome in rows if digest not in seen]
        seen |= {digest for digest, _ in rows}
    result = baserate.count(args.class_tag, outcomes)
    reply = BaserateReply(tag=result.tag, traces=result.total, counts=dict(result.counts), rates=result.rates)
    return reply, baserate.render(result)
