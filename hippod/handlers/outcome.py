"""`outcome` (memory-model.md §9.4): a good or bad mark on the memories a session last recalled, or on
given ids; marks on team memories are queued for the team server (teamlink/marks.py)."""

from __future__ import annotations

import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import OutcomeReply
from hippoctl.protocol.wording import plural
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.lifecycle.lookup import find_memory
from hippod.lifecycle.outcome import mark_outcome, nothing_to_mark
from hippod.recall.strengthen import last_batch_key
from hippod.store.stores import SqliteStore, Store, sqlite_only
from hippod.teamlink import marks as team_marks
from hippod.teamlink import membership

MAX_OUTCOME_IDS = 1000


async def outcome(ctx: RequestContext, body: m.Outcome) -> tuple[OutcomeReply, str]:
    targets: list[tuple[Store, list[str]]] = []
    # Team memories (in this laptop's copy): their marks go to the team server (teamlink/marks.py).
    team: list[str] = []
    if body.ids is not None or body.id is not None:
        ids = body.ids if body.ids is not None else [body.id or ""]
        if len(ids) > MAX_OUTCOME_IDS:
            raise HippoError("usage", f"at most {MAX_OUTCOME_IDS} ids at once")
        # Every id is looked up before any is marked, so an unknown one changes nothing.
        by_store: dict[str, tuple[Store, list[str]]] = {}
        for memory_id in dict.fromkeys(ids):
            try:
                store, memory = await find_memory(ctx, memory_id)
            except HippoError as exc:
                if exc.code != "not_found" or not await team_marks.in_copy(ctx.state.registry, memory_id):
                    raise
                team.append(memory_id)
                continue
            by_store.setdefault(store.root, (store, []))[1].append(memory.id)
        targets.extend(by_store.values())
    else:
        project, global_ = await ctx.read_stores()
        key = last_batch_key(ctx.tenant, ctx.session_key)
        recalled = False
        for candidate in (project, global_):
            if candidate is None:
                continue
            raw = await candidate.rows.get_meta(candidate.db.reader, key)
            recalled = recalled or raw is not None
            ids = msgspec.json.decode(raw, type=list[str]) if raw else []
            if ids:
                targets.append((candidate, ids))
        # Only a laptop's global store is a team member's, with its team batches (a team server is none).
        if isinstance(global_, SqliteStore) and membership.in_team(ctx.state.registry):
            team = await team_marks.last_batch(global_, ctx.tenant, ctx.session_key) or []
        if not targets and not team:
            raise nothing_to_mark(recalled, "this session", "run hippoctl recall first", "--id <memory id>")
    reply, text = await mark_outcome(ctx, targets, body.good)
    if team:
        laptop = sqlite_only(await ctx.global_store(), "a mark on team memories")
        await team_marks.queue_outcome(laptop, team, body.good)
        reply.applied += len(team)
        reply.ids += team
        text += f" ({plural(len(team), 'team memory', 'team memories')}: the mark goes to the team)"
    return reply, text
