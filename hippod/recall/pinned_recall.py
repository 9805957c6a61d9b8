"""`pinnedInject.promptRecall`: the per-prompt hook's recent section replaced by recall matches for the
prompt (recall.md §9.3). Scored as `recall` scores, but nothing is strengthened or audited."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippod.base import clock
from hippod.calls.request import RequestContext
from hippod.model.digest import refused
from hippod.model.share import reaches_every_project
from hippod.model.terms import query_terms
from hippod.recall import pinned_block as pb
from hippod.recall import tombstones
from hippod.recall.merge import merge_results
from hippod.recall.score import ScoreContext, drop_extracted_sources
from hippod.recall.search import OFFLINE, score_store
from hippod.store.stores import Store

# A prompt is a recall query only up to here: a pasted log must not turn into thousands of terms.
PROMPT_QUERY_CHARS = 1000


async def prompt_matches(
    ctx: RequestContext,
    project: Store | None,
    global_: Store | None,
    primary: Store,
    prompt: str,
    session_id: str | None,
    limit: int,
) -> list[pb.Entry]:
    """Up to `limit` of the prompt's best recall matches that are not pinned, not from another project
    and not saved by a compaction of this session (the same exclusions as the recent section)."""
    text = prompt[:PROMPT_QUERY_CHARS]
    if limit <= 0 or validate.query_problem(text) is not None:
        return []
    query = query_terms(text)
    # The prompt waits on this: an API embedder's network round trip is left out (words alone).
    body = m.Recall(query=text, mode=OFFLINE)
    sc = ScoreContext(clock.now(), ctx.cwd_path_tags, ctx.active_scope, ctx.state.loss_aversion)
    hidden = await tombstones.of_read(ctx.tenant, project, global_)
    local = await score_store(project, query, body, ctx, sc) if project else []
    remote = await score_store(global_, query, body, ctx, sc) if global_ else []
    bump = float(primary.config.get("search", {}).get("localBump", 1.2)) if project else 1.0
    entries: list[pb.Entry] = []
    for scored in drop_extracted_sources(merge_results(local, remote, bump)):
        mem = scored.memory
        if hidden and refused(mem.content, hidden):
            continue
        if mem.pinned or not (
            mem.origin_project in (None, "", primary.project) or reaches_every_project(mem.source)
        ):
            continue
        if session_id and mem.source == "compaction" and mem.source_session_id == session_id:
            continue
        entries.append(pb.Entry(mem, scored.source))
        if len(entries) >= limit:
            break
    return entries
