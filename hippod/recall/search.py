"""Recall's ranking (recall.md §1-§6, §10): each store's candidates (by terms, and by meaning with
embeddings on), scored; then the project, global and team results merged and diversified."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from datetime import datetime

from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.embed.service import EXTRA_HINT, Embedder, Settings, embedding_text, text_digest
from hippod.model.memory import Memory
from hippod.model.terms import query_terms
from hippod.recall import tombstones
from hippod.recall.candidates import CANDIDATE_LIMIT, by_terms
from hippod.recall.goal_lift import NO_GOALS, GoalLift, lifting
from hippod.recall.merge import merge_results
from hippod.recall.score import ScoreContext, Scored, drop_extracted_sources, score_candidates
from hippod.store.records import Candidate
from hippod.store.sqlite import embeddings, goals, memories
from hippod.store.stores import SqliteStore, Store, sqlite_only
from hippod.teamlink import cache as team_copy
from hippod.teamlink import membership


async def score_store(
    store: Store,
    query: list[str],
    body: m.Recall,
    ctx: RequestContext,
    sc: ScoreContext,
    tenant: str | None = None,
) -> list[Scored]:
    """One store's candidates, scored; as `tenant` (the team's copy keeps its own), else the request's."""
    tenant = tenant or ctx.tenant
    reader = store.db.reader
    settings = _with_mode(store.embed_settings(), body.mode)
    if body.mode == "hybrid" and store.embedder.missing(settings):
        raise _no_hybrid(store, settings)
    if settings.remote and isinstance(store, SqliteStore) and store.embedder.missing(settings):
        # An API embedder without its key: the recall goes on with words alone, and says why.
        warn(ctx, f"(recall used words alone: {store.embedder.reason(settings.model)})")
    stats = None
    if store.fts5:
        found, stats = await by_terms(
            store.rows,
            reader,
            tenant,
            query,
            include_superseded=body.include_superseded,
            scope=body.scope,
        )
    else:
        found = await _candidates_like(store, query, body, tenant)
    embedder = await _active_embedder(store, settings)
    if not found and embedder is not None:
        # A LIKE-only or unmatched candidate can still score on its cosine (recall.md §2).
        if store.fts5:
            found = await _candidates_like(store, query, body, tenant)
        if not found:
            found = await store.rows.candidates_oldest(
                reader,
                tenant,
                include_superseded=body.include_superseded,
                scope=body.scope,
                limit=CANDIDATE_LIMIT,
            )
    by_meaning, query_vector = await _by_meaning(store, embedder, settings, body, tenant, found, ctx)
    found += by_meaning
    candidates = [c.memory for c in found]
    terms = [c.terms for c in found]
    rowids = [c.rowid for c in found]
    hybrid = await _cosines(
        store,
        settings,
        body.query,
        candidates,
        ctx,
        hybrid_only=body.mode == "hybrid",
        query_vector=query_vector,
    )
    if hybrid is None:
        # Without embeddings a LIKE-only candidate always scores zero (its tokens are not the
        # query's), so the substring fallback above runs only when FTS5 itself is missing.
        return score_candidates(query, candidates, terms, sc, rowids=rowids, stats=stats)
    cosines, blobs = hybrid
    scored = score_candidates(
        query,
        candidates,
        terms,
        sc,
        cosines=cosines,
        hybrid_weight=settings.hybrid_weight,
        cosine_floor=settings.cosine_floor,
        rowids=rowids,
        stats=stats,
    )
    for item in scored:
        item.vector = blobs.get(item.memory.id)
        item.words_only = item.vector is None
    return scored


# A `mode` the hooks' reads use: the store's embeddings when they are the shipped model's, words
# alone when they come from an API, so a hook never waits on the network.
OFFLINE = "offline"


def _with_mode(settings: Settings, mode: str | None) -> Settings:
    """The store's settings under the HTTP API's `mode`: bm25 leaves the model out, hybrid needs it;
    OFFLINE leaves out an API's."""
    if mode == "bm25" or (mode == OFFLINE and settings.remote):
        return dataclasses.replace(settings, mode="off")
    if mode == "hybrid" and settings.mode != "off":
        return dataclasses.replace(settings, mode="required")
    return settings


def _no_hybrid(store: Store, settings: Settings) -> HippoError:
    reason = store.embedder.reason(settings.model) or f"embeddings are off; {EXTRA_HINT} and turn them on"
    return HippoError("mode_not_available", f"hybrid recall is not available: {reason}", hint="use mode=bm25")


async def _candidates_like(store: Store, query: list[str], body: m.Recall, tenant: str) -> list[Candidate]:
    # The team store always has its full-text index: a store without one is a laptop's.
    return await memories.candidates_like(
        sqlite_only(store, "recall without a full-text index").db.reader,
        tenant,
        query,
        include_superseded=body.include_superseded,
        scope=body.scope,
        limit=CANDIDATE_LIMIT,
    )


async def _active_embedder(store: Store, settings: Settings) -> Embedder | None:
    """The store's model when embeddings are on, the model loads, and the store holds vectors of it."""
    if not isinstance(store, SqliteStore):  # the team store keeps no vectors
        return None
    if store.embedder.missing(settings) or not await embeddings.has_any(store.db.reader, settings.model):
        return None
    return await store.embedder.get(settings)


async def _by_meaning(
    store: Store,
    embedder: Embedder | None,
    settings: Settings,
    body: m.Recall,
    tenant: str,
    found: list[Candidate],
    ctx: RequestContext,
) -> tuple[list[Candidate], bytes | None]:
    """The admitted memories nearest the query by meaning that the terms did not find (at most
    `nearest.NEAREST`, from the cosine floor up), and the query's vector when it was made.

    Only with embeddings active (`embedder`, from _active_embedder) on a store of at most
    `nearest.SCAN_MAX` vectors (embed/nearest.py).
    """
    if embedder is None or not isinstance(store, SqliteStore):
        return [], None
    from hippod.embed.nearest import NearestIndex  # numpy, only once a store has vectors

    query = await _query_vector(ctx, embedder, body.query)
    if not query:
        return [], query
    # The size the model's vectors have: an API's is known from its answer.
    dim = len(query) // 4
    index = store.nearest
    if index is None or index.model != embedder.model or index.dim != dim:
        index = store.nearest = NearestIndex(embedder.model, dim)
    await index.ensure_loaded(store.db.reader)
    ids = index.nearest(query, settings.cosine_floor, {c.memory.id for c in found})
    admitted = {
        c.memory.id: c
        for c in await store.rows.candidates_ids(
            store.db.reader, tenant, ids, include_superseded=body.include_superseded, scope=body.scope
        )
    }
    return [admitted[i] for i in ids if i in admitted], query


async def _cosines(
    store: Store,
    settings: Settings,
    query: str,
    candidates: list[Memory],
    ctx: RequestContext,
    *,
    hybrid_only: bool = False,
    query_vector: bytes | None = None,
) -> tuple[list[float | None], dict[str, bytes]] | None:
    """Each candidate's cosine with the query, and the current vectors; None when embeddings do not apply.

    A candidate without a current vector has no cosine (None): nothing but the query is embedded
    here. The query is embedded only when some candidate has a current vector (recall.md §10.4), and
    only once: `query_vector` is its vector when the search by meaning already made it. With
    `hybrid_only` (the HTTP API's mode=hybrid) a model that will not load is an error, not a warning.
    """
    if not candidates:
        return None
    embedder, blobs = None, {}
    if isinstance(store, SqliteStore) and not store.embedder.missing(settings):
        blobs = await _current_vectors(store, settings.model, candidates)
        if len(blobs) < len(candidates):
            # A candidate without a current vector ranks on its words alone: embedding it here
            # would make the reply wait on the model (up to CANDIDATE_LIMIT texts). The background
            # pass embeds it, and one that no pass has queued (its daemon died first) is queued now.
            store.embed_queue.changed_ids(c.id for c in candidates if c.id not in blobs)
        if not blobs:
            return None
        embedder = await store.embedder.get(settings)
    if embedder is None:
        if hybrid_only:
            raise _no_hybrid(store, settings)
        if settings.mode == "required":
            reason = store.embedder.reason(settings.model)
            warn(ctx, f"(embeddings are required by config but unavailable: {reason})")
        return None
    if query_vector is None:
        query_vector = await _query_vector(ctx, embedder, query)
    if not query_vector:
        return None
    return embedder.cosines(query_vector, [blobs.get(c.id) for c in candidates]), blobs


async def _current_vectors(store: SqliteStore, model: str, candidates: list[Memory]) -> dict[str, bytes]:
    """memory id -> its stored vector of `model`, for the candidates whose vector matches their text."""
    stored = await embeddings.vectors(store.db.reader, model, [c.id for c in candidates])
    return {
        c.id: stored[c.id][0]
        for c in candidates
        if c.id in stored and stored[c.id][1] == text_digest(embedding_text(c.content, c.tags))
    }


async def _query_vector(ctx: RequestContext, embedder: Embedder, text: str) -> bytes:
    """The query's vector; empty when an API embedder could not make it, and the recall then goes on
    with words alone and says why."""
    try:
        # A sentence model takes milliseconds for the query, an API a round trip: off the event
        # loop, so other requests go on.
        return await asyncio.to_thread(embedder.query, text)
    except HippoError as exc:
        warn(ctx, f"(recall used words alone: {exc.message})")
        return b""


def warn(ctx: RequestContext, line: str) -> None:
    if line not in ctx.warnings:
        ctx.warnings.append(line)


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
    # What lifted the ranking: `--goal`, else the goals on the primary store's stack.
    goals: GoalLift = NO_GOALS


async def rank(ctx: RequestContext, body: m.Recall) -> Ranking:
    """Candidates, scores and the local + global merge of recall.md §1-§6 (no fill, no side effects)."""
    query = query_terms(body.query)
    project, global_ = await ctx.read_stores()
    primary = project if project is not None else global_
    assert primary is not None, "read_stores returns the global store when there is no project store"
    config = primary.config
    moment = clock.now()
    lift = await _goal_lift(ctx, primary, body.goal)
    scope = body.scope or ctx.active_scope
    sc = ScoreContext(moment, ctx.cwd_path_tags, scope, ctx.state.loss_aversion, lift)
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
    return Ranking(project, global_, primary, moment, ranked, in_team, lift)


async def _goal_lift(ctx: RequestContext, primary: Store, goal: str | None) -> GoalLift:
    """`--goal <tag>` (checked here for the paths that skip the client), else the goals lifting on
    the primary store's stack and the session's; a team server keeps no goals."""
    if goal is not None:
        tag = goal.strip()
        problem = validate.goal_problem(tag)
        if problem is not None:
            raise HippoError("usage", f"--goal: {problem}")
        return GoalLift(explicit=tag)
    if not isinstance(primary, SqliteStore):
        return NO_GOALS
    if primary.goals_pushed is None:
        found = await goals.any_active(primary.db.reader)
        # A push may have committed while this read waited: it set the flag, which stays.
        if primary.goals_pushed is None:
            primary.goals_pushed = found
    if not primary.goals_pushed:
        return NO_GOALS
    session = goals.stack_session(ctx.session_key)
    return GoalLift(stack=tuple(lifting(await goals.on_stack(primary.db.reader, ctx.tenant, session))))


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
