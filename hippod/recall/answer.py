"""The recall verb's answer: the ranked memories packed within the token budget, rendered, and the
block put on the token ledger."""

from __future__ import annotations

import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippoctl.protocol.replies import GraphStep, RecallItem, RecallReply, Skipped, Why
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.model import strength as st
from hippod.model.terms import stem
from hippod.model.tokenize import tokenize
from hippod.recall import hops, ledger_rows, render, rerank
from hippod.recall.budget import tokens, tokens_of
from hippod.recall.pack import Packed, pack
from hippod.recall.score import Scored, sort_key
from hippod.recall.search import rank, warn
from hippod.recall.strengthen import after_recall
from hippod.store.stores import SqliteStore


def _item(s: Scored, why: bool, words: list[str]) -> RecallItem:
    mem = s.memory
    item = RecallItem(
        id=mem.id,
        source=s.source,
        layer=mem.layer,
        confidence=mem.confidence,
        aged=st.is_aged(pinned=mem.pinned, confidence=mem.confidence, days_since_retrieved=s.retrieved_days),
        pinned=mem.pinned,
        score=round(s.score, 6),
        strength=round(s.strength, 6),
        tokens=0,
        tags=mem.tags,
        content=mem.content,
        created=mem.created,
        last_retrieved=mem.last_retrieved,
        retrieval_count=mem.retrieval_count,
        half_life_days=mem.half_life_days,
        superseded_by=mem.superseded_by,
    )
    if s.hop and s.edge is not None:
        item.graph = GraphStep(hops=s.hop, edge=s.edge, via=s.via or "", origin=s.origin or "")
    if why:
        item.why = Why(
            bm25=round(s.bm25, 6),
            bm25_norm=round(s.bm25_norm, 6),
            # Shown as the words the user typed whose terms matched, in query order.
            matched=[w for w in dict.fromkeys(words) if stem(w) in s.matched],
            cosine=None if s.cosine is None else round(s.cosine, 6),
            words_only=s.words_only,
            base=round(s.base, 6),
            multipliers={k: round(v, 6) for k, v in s.multipliers.items()},
            envelope={
                "kind": mem.kind,
                "scope": mem.scope,
                "owner": mem.owner,
                "artifact_ref": mem.artifact_ref,
                "session_id": mem.source_session_id,
            },
        )
    return item


def _shown(item: RecallItem, packed: Packed, index: int) -> RecallItem:
    """The item as printed: its cut text and full size when it was cut, and what it costs."""
    text = packed.cut.get(index)
    if text is not None:
        item = msgspec.structs.replace(item, content=text, truncated=True, full_chars=len(item.content))
    item.tokens = packed.sizes[index]
    return item


def _merged(ranked: list[Scored], extra: list[Scored]) -> list[Scored]:
    """`ranked` in its own order, each addition placed before the first result it outranks."""
    extra = sorted(extra, key=sort_key)
    out: list[Scored] = []
    at = 0
    for result in ranked:
        key = sort_key(result)
        while at < len(extra) and sort_key(extra[at]) < key:
            out.append(extra[at])
            at += 1
        out.append(result)
    return out + extra[at:]


class _Fill:
    """The budget fill over one ranked list (recall.md §7). Items are built and rendered as the fill
    reaches them: past the budget, most never are."""

    def __init__(self, ranked: list[Scored], body: m.Recall, words: list[str], budget: int) -> None:
        self.ranked, self.body, self.words, self.budget = ranked, body, words, budget
        self.items: dict[int, RecallItem] = {}
        self.whole: dict[int, int] = {}  # each item's cost with all its text, kept across both fills
        self.blocks: dict[int, str] = {}  # each item's block with all its text, printed as measured

    def item(self, index: int) -> RecallItem:
        if index not in self.items:
            self.items[index] = _item(self.ranked[index], self.body.why, self.words)
        return self.items[index]

    def cost(self, index: int, content: str) -> int:
        why = self.body.why
        shown = self.item(index)
        if content is shown.content:
            if index not in self.whole:
                self.blocks[index] = render.item_block(shown, why=why)
                self.whole[index] = tokens(self.blocks[index] + "\n\n")
            return self.whole[index]
        shown = msgspec.structs.replace(shown, content=content)
        return tokens(render.item_block(shown, why=why) + "\n\n")

    def pack(self) -> Packed:
        body = self.body
        ids = [s.memory.id for s in self.ranked]
        contents = [s.memory.content for s in self.ranked]
        # Each item's block_floor and the blank line after it: the block's fixed part, then its own.
        fixed = render.block_floor("", "") + 2
        floors = [tokens_of(fixed + len(i) + len(c)) for i, c in zip(ids, contents, strict=True)]
        heading = tokens(render.reserved_heading(body.query) + "\n\n")
        min_results = max(0, body.min_results)

        def fill(reserved: int) -> Packed:
            return pack(
                ids,
                contents,
                self.cost,
                self.budget,
                reserved=reserved,
                min_results=min_results,
                limit=body.limit,
                floors=floors,
            )

        packed = fill(heading)
        if packed.skipped_budget or packed.skipped_limit:
            # Something is left out, so a cutoff line will be printed: fill again with room for it.
            packed = fill(heading + tokens(render.RESERVED_CUTOFF + "\n"))
        return packed


async def recall(
    ctx: RequestContext, body: m.Recall, *, surface: str | None = "recall", rerank_default: bool = False
) -> tuple[RecallReply, str]:
    """Ranked memories within the budget; the block goes on the token ledger under `surface`
    (None: the caller records it, e.g. as part of a larger block). The request's reranker reorders
    the top first, or with `rerank_default` (the recall verb) the store's reranker.default."""
    problem = validate.query_problem(body.query)
    if problem is not None:
        raise HippoError("usage", problem)
    if body.budget is not None and body.budget < 0:
        raise HippoError("usage", "--budget must be 0 or more")
    problem = validate.number_problem("--hops", body.hops, 0, validate.MAX_HOPS)
    if problem is not None:
        raise HippoError("usage", problem)
    ranking = await rank(ctx, body)
    ranked = ranking.ranked
    config = ranking.primary.config
    reranker = rerank.chosen(body, config, use_default=rerank_default)
    if reranker is not None:
        ranked = await rerank.reorder(ctx, body.query, ranked, reranker, rerank.top_n(config))
    budget = body.budget if body.budget is not None else int(config.get("defaultBudget", 4000))

    words = tokenize(body.query)
    filled = _Fill(ranked, body, words, budget)
    packed = filled.pack()
    if body.hops and not isinstance(ranking.primary, SqliteStore):
        warn(ctx, "(--hops: the team store keeps no entity graph; nothing was added)")
    elif body.hops:
        seeds = [ranked[i] for i in packed.taken]
        extra = await hops.expand(
            ranking,
            seeds,
            body.hops,
            tenant=ctx.tenant,
            include_superseded=body.include_superseded,
            scope=body.scope,
            loss_aversion=ctx.state.loss_aversion,
        )
        if extra:
            # The additions take their place by score and go through the same fill.
            ranked = ranking.ranked = _merged(ranked, extra)
            filled = _Fill(ranked, body, words, budget)
            packed = filled.pack()
    item, blocks = filled.item, filled.blocks
    chosen = [_shown(item(i), packed, i) for i in packed.taken]
    cut = None
    if packed.skipped_budget or packed.skipped_limit:
        cut = render.cutoff(len(chosen), len(ranked), packed.skipped_budget, packed.skipped_limit)
    if chosen:
        printed = [
            render.item_block(i, why=body.why) if i.truncated or index not in blocks else blocks[index]
            for index, i in zip(packed.taken, chosen, strict=True)
        ]
        rest = render.body(printed, cut)
        total = tokens(render.reserved_heading(body.query) + "\n" + rest)
        text = render.heading(len(chosen), total, body.query) + "\n" + rest
    elif packed.skipped_budget:
        text = render.none_fit(body.query, len(ranked), budget)
        total = tokens(text)
    else:
        text = render.no_results(body.query)
        total = tokens(text)

    await after_recall(
        ctx, ranking, [ranked[i] for i in packed.taken], body.query, mode="recall", strengthen=body.strengthen
    )
    reply = RecallReply(
        query=body.query,
        budget=budget,
        tokens=total,
        candidates=len(ranked),
        skipped=Skipped(budget=packed.skipped_budget, limit=packed.skipped_limit),
        results=chosen,
        mode="hybrid" if any(s.cosine is not None for s in ranked) else "bm25",
    )
    if chosen and surface is not None:
        await ledger_rows.queue_sent(ctx, ranking.primary, surface=surface, text=text, items=len(chosen))
    return reply, text
