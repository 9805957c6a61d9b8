"""After a recall: what it returned strengthened, the session's last batch kept, the audit row."""

from __future__ import annotations

from datetime import datetime

import aiosqlite
import msgspec

from hippod.base import clock
from hippod.calls.request import RequestContext
from hippod.model import strength as st
from hippod.recall.score import Scored
from hippod.recall.search import Ranking, warn
from hippod.store.sqlite import goals
from hippod.store.stores import SqliteStore, Store
from hippod.teamlink import marks as team_marks


def last_batch_key(tenant: str, session: str) -> str:
    """The meta key under which a session's last recall keeps what it returned, for `outcome`."""
    return f"last_batch:{tenant}:{session}"


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
    team = [s.memory.id for s in returned if s.source == "team" and not s.hop] if ranking.in_team else None
    for store, source in ((ranking.project, "local"), (ranking.global_, "global")):
        if store is not None:
            picked = [s for s in returned if s.source == source]
            in_global = team if source == "global" else None
            # The goals live in the primary store: only its own memories are noted under them.
            under = _under_goals(ranking, picked) if store is ranking.primary else []
            await _after_recall(store, picked, query, ctx, ranking.moment, mode, strengthen, in_global, under)


def _under_goals(ranking: Ranking, picked: list[Scored]) -> list[tuple[int, str]]:
    """(goal id, memory id) for each returned memory and each goal on the stack that lifted it; the
    graph's additions are not noted (recall.md §12)."""
    if not ranking.goals.stack:
        return []
    return [(g.id, s.memory.id) for s in picked if not s.hop for g in ranking.goals.goals_of(s.memory.tags)]


async def _after_recall(
    store: Store,
    picked: list[Scored],
    query: str,
    ctx: RequestContext,
    moment: datetime,
    mode: str,
    strengthen: bool,
    team: list[str] | None = None,
    under: list[tuple[int, str]] | None = None,
) -> None:
    """Strengthen what was returned, replace the session's last batch, audit (recall.md §12); in the
    global store of a team member, also what it returned of the team's (`team`, teamlink/marks.py);
    in the store holding the goal stack, which memories were recalled under which goal (`under`).

    The write is made after the reply (the results are already chosen and strengthening never
    changes them), behind any long write that holds the store (an import, a sleep's write phase);
    the next request on the store waits for it, so it reads the strengthened rows (Database.settled).
    On a full disk the strengthening is skipped and a warning says so: the answer still goes out.
    """
    # The graph's additions are returned but exempt from a return's side effects (recall.md §12):
    # not strengthened, not in the last batch (`outcome` does not mark them), not noted under a goal.
    grown = [s.memory.id for s in picked if not s.hop]
    now = clock.iso(moment)
    batch_key = last_batch_key(ctx.tenant, ctx.session_key)
    tenant, actor, session = ctx.tenant, ctx.actor, ctx.session_key

    async def write(conn: object) -> None:
        if grown and strengthen:
            await store.rows.strengthen(conn, grown, now, st.RETRIEVAL_HALF_LIFE_BONUS)
        await store.rows.set_meta(conn, batch_key, msgspec.json.encode(grown).decode())
        if under and isinstance(conn, aiosqlite.Connection):  # goals live in SQLite stores only
            await goals.record_recalls(conn, under, now)
        await store.rows.audit(
            conn,
            ts=now,
            tenant=tenant,
            actor=actor,
            op="recall",
            metadata={"query": query[:200], "results": len(picked), "mode": mode},
        )

    # Mirrors hold no usage numbers: strengthening changes one only where it lifts a stale memory
    # to observed. The pass reads those rows back as committed (one forgotten meanwhile is skipped).
    lifted = (
        [s.memory.id for s in picked if s.memory.confidence == "stale" and not s.hop] if strengthen else []
    )

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
