"""The recall handler: candidates, scoring, merge, budget, render, strengthen (recall.md §1-§8, §12)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import aiosqlite
import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippoctl.protocol.replies import RecallItem, RecallReply, Skipped, Why
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.context import ledger_rows
from hippod.handlers.outcome import last_batch_key
from hippod.handlers.recall_store import score_store, warn
from hippod.lifecycle import strength as st
from hippod.recall import render, tombstones
from hippod.recall.budget import tokens, tokens_of
from hippod.recall.merge import merge_results
from hippod.recall.pack import Packed, pack
from hippod.recall.score import ScoreContext, Scored, drop_extracted_sources
from hippod.recall.terms import query_terms, stem
from hippod.recall.tokenize import tokenize
from hippod.store.records import Memory
from hippod.store.stores import SqliteStore, Store
from hippod.teamlink import cache as team_copy
from hippod.teamlink import marks as team_marks
from hippod.teamlink import membership

MMR_TOP = 100


async def _diversify(store: Store, ranked: list[Scored]) -> list[Scored]:
    """MMR over the top 100 when the results carry vectors and `mmr.enabled` (recall.md §10.5)."""
    settings = store.embed_settings()
    head = ranked[:MMR_TOP]
    if not settings.mmr or not any(s.vector is not None for s in head):
        return ranked
    embedder = await store.embedder.get(settings)
    if embedder is None:
        return ranked
    order = embedder.mmr_order([s.score for s in head], [s.vector for s in head], settings.mmr_lambda)
    return [head[i] for i in order] + ranked[MMR_TOP:]


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


def _mem(scored: Scored) -> Memory:
    return scored.memory


@dataclass(slots=True)
class Ranking:
    """One ranked read over the project and global stores, before the budget fill."""

    project: Store | None
    global_: Store | None
    primary: Store  # the project store when there is one, else the global store
    moment: datetime
    ranked: list[Scored]
    # This hippod is in a team: the copy of its memories was read, and their marks go to the team.
    in_team: bool = False


async def rank(ctx: RequestContext, body: m.Recall) -> Ranking:
    """Candidates, scores and the local + global merge of recall.md §1-§6 (no fill, no side effects)."""
    query = query_terms(body.query)
    project, global_ = await ctx.read_stores()
    primary = project if project is not None else global_
    assert primary is not None, "read_stores returns the global store when there is no project store"
    config = primary.config
    moment = clock.now()
    sc = ScoreContext(moment, ctx.cwd_path_tags, body.scope or ctx.active_scope, ctx.state.loss_aversion)
    hidden = await tombstones.of_read(ctx.tenant, project, global_)
    local = await score_store(project, query, body, ctx, sc) if project else []
    remote = await score_store(global_, query, body, ctx, sc) if global_ else []
    local, remote = tombstones.visible(local, hidden, _mem), tombstones.visible(remote, hidden, _mem)
    in_team = membership.in_team(ctx.state.registry)
    own = [s for s in (project, global_) if s is not None]
    shared = await _team_results(ctx, query, body, sc, own) if in_team else []
    if body.equal_sources or project is None:
        bump = 1.0
    elif body.local_bump is not None:
        bump = body.local_bump
    else:
        bump = float(config.get("search", {}).get("localBump", 1.2))
    team_bump = 1.0 if body.equal_sources else float(config.get("search", {}).get("teamBump", 1.0))
    merged = merge_results(local, remote, bump, shared, team_bump)
    ranked = await _diversify(primary, drop_extracted_sources(merged))
    return Ranking(project, global_, primary, moment, ranked, in_team)


async def _team_results(
    ctx: RequestContext, query: list[str], body: m.Recall, sc: ScoreContext, own: list[Store]
) -> list[Scored]:
    """The team's memories from this laptop's copy of them (teamlink/cache.py); a value this user
    rejected stays out of them too. They are read, never strengthened here."""
    copy = await team_copy.open_cache(ctx.state.registry, create=False)
    if copy is None:
        return []
    found = await score_store(copy, query, body, ctx, sc, tenant=team_copy.TENANT)
    return tombstones.visible(found, await tombstones.of_stores(ctx.tenant, own), _mem)


async def recall(
    ctx: RequestContext, body: m.Recall, *, surface: str | None = "recall"
) -> tuple[RecallReply, str]:
    """Ranked memories within the budget; the block goes on the token ledger under `surface`
    (None: the caller records it, e.g. as part of a larger block)."""
    problem = validate.query_problem(body.query)
    if problem is not None:
        raise HippoError("usage", problem)
    if body.budget is not None and body.budget < 0:
        raise HippoError("usage", "--budget must be 0 or more")
    ranking = await rank(ctx, body)
    ranked = ranking.ranked
    config = ranking.primary.config
    budget = body.budget if body.budget is not None else int(config.get("defaultBudget", 4000))

    words = tokenize(body.query)
    # Items are built and rendered as the fill reaches them: past the budget, most never are.
    items: dict[int, RecallItem] = {}
    whole: dict[int, int] = {}  # each item's cost with all its text, kept across both fills
    blocks: dict[int, str] = {}  # each item's block with all its text, printed as measured

    def item(index: int) -> RecallItem:
        if index not in items:
            items[index] = _item(ranked[index], body.why, words)
        return items[index]

    def cost(index: int, content: str) -> int:
        shown = item(index)
        if content is shown.content:
            if index not in whole:
                blocks[index] = render.item_block(shown, why=body.why)
                whole[index] = tokens(blocks[index] + "\n\n")
            return whole[index]
        shown = msgspec.structs.replace(shown, content=content)
        return tokens(render.item_block(shown, why=body.why) + "\n\n")

    ids = [s.memory.id for s in ranked]
    contents = [s.memory.content for s in ranked]
    # Each item's block_floor and the blank line after it: the block's fixed part, then its own.
    fixed = render.block_floor("", "") + 2
    floors = [tokens_of(fixed + len(i) + len(c)) for i, c in zip(ids, contents, strict=True)]
    heading = tokens(render.reserved_heading(body.query) + "\n\n")
    min_results = max(0, body.min_results)
    packed = pack(
        ids,
        contents,
        cost,
        budget,
        reserved=heading,
        min_results=min_results,
        limit=body.limit,
        floors=floors,
    )
    if packed.skipped_budget or packed.skipped_limit:
        # Something is left out, so a cutoff line will be printed: fill again with room for it.
        reserved = heading + tokens(render.RESERVED_CUTOFF + "\n")
        packed = pack(
            ids,
            contents,
            cost,
            budget,
            reserved=reserved,
            min_results=min_results,
            limit=body.limit,
            floors=floors,
        )
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


async def after_recall(
    ctx: RequestContext,
    ranking: Ranking,
    returned: list[Scored],
    query: str,
    *,
    mode: str,
    strengthen: bool = True,
) -> None:
    """The side effects of recall.md §12 in each store the returned memories came from; without
    `strengthen`, only the last batch and the audit row. Team memories are marked for the team
    server instead (teamlink/marks.py)."""
    team = [s.memory.id for s in returned if s.source == "team"] if ranking.in_team else None
    for store, source in ((ranking.project, "local"), (ranking.global_, "global")):
        if store is not None:
            picked = [s for s in returned if s.source == source]
            in_global = team if source == "global" else None
            await _after_recall(store, picked, query, ctx, ranking.moment, mode, strengthen, in_global)


async def _after_recall(
    store: Store,
    picked: list[Scored],
    query: str,
    ctx: RequestContext,
    moment: datetime,
    mode: str,
    strengthen: bool,
    team: list[str] | None = None,
) -> None:
    """Strengthen what was returned, replace the session's last batch, audit (recall.md §12); in the
    global store of a team member, also what it returned of the team's (`team`, teamlink/marks.py).

    The write is made after the reply (the results are already chosen and strengthening never
    changes them), behind any long write that holds the store (an import, a sleep's write phase);
    the next request on the store waits for it, so it reads the strengthened rows (Database.settled).
    On a full disk the strengthening is skipped and a warning says so: the answer still goes out.
    """
    ids = [s.memory.id for s in picked]
    now = clock.iso(moment)
    batch_key = last_batch_key(ctx.tenant, ctx.session_key)
    tenant, actor, session = ctx.tenant, ctx.actor, ctx.session_key

    async def write(conn: object) -> None:
        if ids and strengthen:
            await store.rows.strengthen(conn, ids, now, st.RETRIEVAL_HALF_LIFE_BONUS)
        await store.rows.set_meta(conn, batch_key, msgspec.json.encode(ids).decode())
        await store.rows.audit(
            conn,
            ts=now,
            tenant=tenant,
            actor=actor,
            op="recall",
            metadata={"query": query[:200], "results": len(ids), "mode": mode},
        )

    # Mirrors hold no usage numbers: strengthening changes one only where it lifts a stale memory
    # to observed. The pass reads those rows back as committed (one forgotten meanwhile is skipped).
    lifted = [s.memory.id for s in picked if s.memory.confidence == "stale"] if strengthen else []

    def mirror() -> None:
        if lifted:
            store.mirrors.changed_ids(lifted)

    # The results are chosen and strengthening cannot change them: the reply goes out first.
    if team is not None and isinstance(store, SqliteStore):
        # A team member's global store: in the same write, the team memories the recall returned.
        async def with_team(conn: aiosqlite.Connection) -> None:
            await write(conn)
            await team_marks.record_recall(conn, store, team, tenant, session, now, strengthen=strengthen)

        skipped = await store.db.write_bookkeeping(with_team, mirror, after_reply=True)
    else:
        skipped = await store.db.write_bookkeeping(write, mirror, after_reply=True)
    if skipped is not None:
        warn(ctx, f"(recall counts not updated: {skipped.message})")
