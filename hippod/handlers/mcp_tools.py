"""One MCP tool call from `hippoctl mcp` (integrations.md §11): check the arguments, then run the
verb the tool stands for through its own handler.

The call's store is the cwd's project store (walking up), else the global store; its last-batch key
(recall, context, outcome) is the MCP process's `mcp:<pid>`.
"""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippoctl.protocol import messages_cards as mc
from hippoctl.protocol.replies import OutcomeReply
from hippoctl.protocol.replies_mcp import McpToolReply
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.handlers import admin, card_runs, cards, conflicts, learn, mcp_reads, memory, outcome, sharing
from hippod.lifecycle import outcome as marks
from hippod.lifecycle.lookup import find_memory
from hippod.mcp import args as a
from hippod.mcp.request import McpContext, for_tool
from hippod.store.stores import Store


async def mcp_tool_call(ctx: RequestContext, body: m.McpToolCall) -> tuple[McpToolReply, str]:
    args = a.parse(body.tool, body.arguments)
    ctx.refuse_off_team(args.team_refusal(body.tool))
    data, text = await _run(for_tool(ctx, body.session_key), args)
    return McpToolReply(tool=body.tool, result=data), text


async def _run(ctx: McpContext, args: a.Args) -> tuple[Any, str]:
    match args:
        case a.RecallArgs():
            return await mcp_reads.recall(ctx, args)
        case a.AssembleArgs():
            return await mcp_reads.assemble(ctx, args)
        case a.DrillArgs():
            return await mcp_reads.drill_down(ctx, args)
        case a.RememberArgs():
            body = m.Remember(content=args.text, tags=a.tags(args.tag), error=args.error, pin=args.pin)
            return await memory.remember(for_tool(ctx, ctx.key, global_store=args.global_), body)
        case a.OutcomeArgs():
            return await _outcome(ctx, args)
        case a.ContextArgs():
            return await mcp_reads.context(ctx, args)
        case a.StatusArgs():
            return await admin.status(ctx, m.Status())
        case a.LearnArgs():
            return await learn.learn_git(ctx, m.LearnGit(days=args.days))
        case a.ConflictsArgs():
            return await conflicts.conflicts(ctx, m.Conflicts(status=args.status))
        case a.ResolveArgs():
            resolve = m.Resolve(
                n=args.conflict_id,
                keep=args.keep,
                forget=args.forget,
                reject_loser=args.reject_loser,
                reason=args.reason,
            )
            return await conflicts.resolve(ctx, resolve)
        case a.ShareArgs():
            return await sharing.share(ctx, m.Share(id=args.id, force=args.force))
        case a.PeersArgs():
            return await sharing.peers(ctx, m.Peers())
        case a.BaserateArgs():
            return await mcp_reads.predict_baserate(ctx, args)
        case a.CardListArgs():
            return await cards.list_cards(ctx, mc.CardList(status=args.status))
        case a.CardShowArgs():
            return await cards.show(ctx, mc.CardShow(id=args.card_id))
        case a.CardCreateArgs():
            create = mc.CardCreate(
                title=args.title,
                repo=args.repo,
                contract=args.contract,
                budget=args.budget,
                depends_on=args.depends_on or [],
            )
            return await cards.create(ctx, create)
        case a.CardClaimArgs():
            return await card_runs.claim(ctx, mc.CardClaim(id=args.card_id, runtime=args.runtime))
        case a.CardMoveArgs():
            return await _card_move(ctx, args)
        case a.CardCommentArgs():
            return await cards.comment(ctx, mc.CardComment(id=args.card_id, body=args.body, author="mcp"))
    raise AssertionError(f"no tool runs {type(args).__name__}")


async def _outcome(ctx: McpContext, args: a.OutcomeArgs) -> tuple[OutcomeReply, str]:
    """Mark the given memories, or without ids the last batch this MCP session recalled."""
    if args.ids is None:
        try:
            return await outcome.outcome(ctx, m.Outcome(good=args.good))
        except HippoError as exc:
            if exc.code != "no_recent_recall":
                raise
            recalled = exc.details.get("recalled") is True
            raise marks.nothing_to_mark(
                recalled, "this MCP session", "call hippo_recall first", "ids"
            ) from None
    # Every id is looked up before any is marked, so an unknown one changes nothing.
    targets: dict[str, tuple[Store, list[str]]] = {}
    for memory_id in dict.fromkeys(args.ids):
        store, found = await find_memory(ctx, memory_id)
        targets.setdefault(store.root, (store, []))[1].append(found.id)
    return await marks.mark_outcome(ctx, list(targets.values()), args.good)


async def _card_move(ctx: McpContext, args: a.CardMoveArgs) -> tuple[Any, str]:
    """hippo_card_move: the card verb its action names."""
    card, run = args.card_id, args.run
    if args.action == "heartbeat":
        return await card_runs.heartbeat(ctx, mc.CardHeartbeat(id=card, run=run))
    if args.action == "block":
        return await card_runs.block(ctx, mc.CardBlock(id=card, reason=args.reason or "", run=run))
    if args.action == "review":
        return await card_runs.review(ctx, mc.CardReview(id=card, run=run))
    return await card_runs.complete(ctx, mc.CardComplete(id=card, outcome=args.outcome or "", run=run))
