"""The per-prompt hook, `context --pinned-only` (recall.md §9, pinned injection): pinned memories and
the newest others as one block, skipped while unchanged in a session, every send and skip on the ledger.

Nothing is strengthened: the hook runs before every prompt and would otherwise keep its own items alive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiosqlite
import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippoctl.protocol.messages_ingest import FORMATS
from hippoctl.protocol.replies_pinned import PinnedItem, PinnedReply
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.context.isolation import Place, placement
from hippod.model.memory import Memory
from hippod.model.secrets import looks_secret
from hippod.recall import ledger_rows, tombstones
from hippod.recall import pinned_block as pb
from hippod.recall.pinned_recall import prompt_matches
from hippod.store.sqlite import ledger, pinned_rows, pinned_state
from hippod.store.stores import SqliteStore, sqlite_only


@dataclass(frozen=True, slots=True)
class Settings:
    """`pinnedInject` of the store's config, each unusable value replaced by its default."""

    enabled: bool = True
    budget: int = 1500
    skip_unchanged: bool = True
    refresh_turns: int = 10
    prompt_recall: bool = False

    @classmethod
    def of(cls, config: dict[str, Any]) -> Settings:
        raw = config.get("pinnedInject")
        raw = raw if isinstance(raw, dict) else {}
        d = cls()

        def flag(key: str, default: bool) -> bool:
            value = raw.get(key, default)
            return value if isinstance(value, bool) else default

        def count(key: str, default: int) -> int:
            value = raw.get(key, default)
            ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
            return int(value) if ok else default

        return cls(
            enabled=flag("enabled", d.enabled),
            budget=count("budget", d.budget),
            skip_unchanged=flag("skipUnchanged", d.skip_unchanged),
            refresh_turns=count("refreshTurns", d.refresh_turns),
            prompt_recall=flag("promptRecall", d.prompt_recall),
        )


@dataclass(frozen=True, slots=True)
class HookInput:
    """What the hook reads from the host's JSON (session id, prompt); both optional."""

    session_id: str | None
    prompt: str | None


def hook_input(payload: object, fallback_session: str | None) -> HookInput:
    """Session id and prompt from the host's payload; the request's session when the payload has none."""
    fields = payload if isinstance(payload, dict) else {}
    session = fields.get("session_id")
    prompt = fields.get("prompt")
    session = session.strip() if isinstance(session, str) and session.strip() else fallback_session
    prompt = prompt if isinstance(prompt, str) and prompt.strip() else None
    return HookInput(session, prompt)


async def pinned_context(
    ctx: RequestContext, body: m.Context, *, surface: str = "prompt_hook"
) -> tuple[PinnedReply, str]:
    """Build the block, decide send or skip, remember the decision and record it on the ledger
    under `surface`."""
    if body.format not in FORMATS:
        raise HippoError("usage", f"--format must be one of {', '.join(FORMATS)}, not {body.format!r}")
    for flag, value in (("--budget", body.budget), ("--include-recent", body.include_recent)):
        problem = None if value is None else validate.number_problem(flag, value, 0)
        if problem is not None:
            raise HippoError("usage", problem)
    project, global_ = await ctx.read_stores()
    # The block's per-session state and the ledger are a laptop's own (Context.team_refusal).
    stores = [
        (sqlite_only(s, "context --pinned-only"), source)
        for s, source in ((project, "local"), (global_, "global"))
        if s is not None
    ]
    # read_stores returns the global store when there is no project store.
    primary = stores[0][0]
    settings = Settings.of(primary.config)
    fallback = ctx.session_key if ctx.session_key != "-" else None
    given = hook_input(body.payload, fallback)
    budget = body.budget if body.budget is not None else settings.budget
    reply = PinnedReply(
        mode="pinned",
        action="disabled",
        session_id=given.session_id,
        budget=budget,
        tokens=0,
        digest=None,
        skips=0,
        recall=False,
        items=[],
    )
    if not settings.enabled:
        return reply, _text(body.format, reply, "")
    reply.action = "empty"
    if budget <= 0:
        return reply, _text(body.format, reply, "")

    scope = body.scope or ctx.active_scope
    pinned: list[pb.Entry] = []
    for store, source in stores:
        rows = await pinned_rows.pinned(store.db.reader, ctx.tenant, primary.project)
        pinned += [pb.Entry(row, source) for row in rows]
    hidden = await tombstones.of_read(ctx.tenant, project, global_)
    pinned = tombstones.visible([e for e in pinned if _shown(e, primary.project)], hidden, _entry_memory)
    ordered = pb.dedupe(pb.order_pinned(pinned, scope))
    seen = {pb.content_key(e.memory) for e in ordered}
    if settings.prompt_recall and given.prompt is not None:
        reply.recall = True
        recent = await prompt_matches(
            ctx, project, global_, primary, given.prompt, given.session_id, body.include_recent
        )
    else:
        recent = []
        for store, source in stores:
            rows = await pinned_rows.recent(
                store.db.reader, ctx.tenant, primary.project, given.session_id, body.include_recent
            )
            recent += [pb.Entry(row, source) for row in rows]
        recent = pb.order_recent(recent)
    recent = tombstones.visible([e for e in recent if _shown(e, primary.project)], hidden, _entry_memory)
    recent = pb.dedupe(recent, seen)[: body.include_recent]

    block = pb.fill(ordered, recent, budget)
    reply.items = [_item(e, "pinned") for e in block.pinned] + [_item(e, "recent") for e in block.recent]
    if not block.markdown:
        return reply, _text(body.format, reply, "")
    reply.tokens = ledger.estimate(block.markdown)
    reply.digest = pb.digest(block.markdown)
    send, skips = await _decide(primary, ctx.tenant, given.session_id, reply.digest, settings)
    reply.action = "sent" if send else "skipped"
    reply.skips = skips
    if given.session_id is not None:
        await _remember(primary, ctx.tenant, given.session_id, reply.digest, skips)
    row = ledger.LedgerRow(
        surface=surface,
        tokens=reply.tokens,
        items=block.items,
        skipped=not send,
        session_id=given.session_id,
        project=primary.project,
        store=primary.root,
    )
    await ledger_rows.queue(ctx, row)
    return reply, _text(body.format, reply, block.markdown if send else "")


async def _decide(
    store: SqliteStore, tenant: str, session_id: str | None, digest: str, settings: Settings
) -> tuple[bool, int]:
    """(send?, skips to remember): skip an unchanged block until `refreshTurns` skips (recall.md §9.5)."""
    if session_id is None or not settings.skip_unchanged:
        return True, 0
    last = await pinned_state.get(store.db.reader, tenant, session_id)
    if last is None or last[0] != digest:
        return True, 0
    skips = last[1]
    if settings.refresh_turns == 0 or skips < settings.refresh_turns:
        return False, skips + 1
    return True, 0


async def _remember(store: SqliteStore, tenant: str, session_id: str, digest: str, skips: int) -> None:
    """Keep the session's digest and skip count (queued behind a long write rather than waited on)."""
    now = clock.iso(clock.now())

    async def write(conn: aiosqlite.Connection) -> None:
        await pinned_state.put(conn, tenant, session_id, digest, skips, now)

    # Without room on the disk the block is still sent: only its skip count is not kept.
    await store.db.write_bookkeeping(write)


def _entry_memory(entry: pb.Entry) -> Memory:
    return entry.memory


def _shown(entry: pb.Entry, project: str) -> bool:
    """Project isolation as `context` applies it: a secret-looking row shows only in its own project."""
    memory = entry.memory
    place = placement(
        memory.origin_project,
        entry.source,
        project,
        isolation=True,
        cross_project=False,
        is_secret=lambda: looks_secret(memory.content, memory.tags),
        memory_source=memory.source,
    )
    return place is Place.MAIN


def _item(entry: pb.Entry, section: str) -> PinnedItem:
    mem = entry.memory
    return PinnedItem(
        id=mem.id,
        section=section,
        source=entry.source,
        confidence=mem.confidence,
        tags=mem.tags,
        created=mem.created,
        content=mem.content,
        truncated=entry.full_chars is not None,
        full_chars=entry.full_chars,
    )


def _text(form: str, reply: PinnedReply, markdown: str) -> str:
    """What the client prints: the JSON line or markdown when sent, the reply document for --format json."""
    if form == "json":
        return msgspec.json.encode(reply).decode()
    if not markdown:
        return ""
    return pb.additional_context(markdown) if form == "additional-context" else markdown
