"""`promote`, `share`, `peers` and `sync`: the global store (sleep.md §8); the copying itself, sleep's
auto-share with it, is sleep/auto_share.py."""

from __future__ import annotations

import secrets

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_lifecycle import Peer, PeersReply, SharedItem, ShareReply, SyncReply
from hippoctl.protocol.wording import DRY_RUN, plural
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.model import share as rules
from hippod.model.digest import refused
from hippod.model.memory import Memory
from hippod.sleep.auto_share import auto_share, copy_in, global_id, share_keys
from hippod.store.sqlite import memories, rejections, sharing
from hippod.store.stores import SqliteStore, sqlite_only


async def _project_memory(ctx: RequestContext, memory_id: str) -> tuple[SqliteStore, Memory]:
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    if store.kind != "project":
        raise HippoError(
            "no_project_store", f"no project store above {ctx.request.cwd}; nothing to copy from"
        )
    memory = await memories.get(store.db.reader, ctx.tenant, memory_id)
    if memory is None:
        raise HippoError("not_found", f"no memory with id {memory_id} in {store.root}")
    return store, memory


async def _to_global(
    ctx: RequestContext, store: SqliteStore, memory: Memory, source: str, op: str, score: float | None
) -> tuple[SharedItem, str]:
    """Copy one memory to the global store unless it is already there or its text is rejected."""
    global_store = sqlite_only(await ctx.global_store(), ctx.verb)
    present = (await share_keys(global_store, memory.tenant_id)).get(rules.share_key(memory.content))
    if present is not None:
        return SharedItem(
            memory.id, present, score, already=True
        ), f"{memory.id} is already in the global store as {present}"
    if refused(memory.content, await rejections.all_digests(global_store.db.reader, memory.tenant_id)):
        raise HippoError(
            "rejected_value", "this text was rejected in the global store and cannot be copied there"
        )
    now = clock.iso(clock.now())
    copy = rules.copy_for(memory, new_id=global_id(), source=source, now=now, origin_project=store.project)
    stored = await copy_in(global_store, [copy], actor=ctx.actor, op=op, origins=[memory.id])
    if not stored:
        raise HippoError(
            "rejected_value", "this text was rejected in the global store and cannot be copied there"
        )
    return SharedItem(memory.id, copy.id, score), f"{copy.id}"


async def promote(ctx: RequestContext, body: m.Promote) -> tuple[ShareReply, str]:
    store, memory = await _project_memory(ctx, body.id)
    item, text = await _to_global(ctx, store, memory, f"{rules.PROMOTED}{store.project}", "promote", None)
    if not item.already:
        text = f"Promoted {memory.id} to the global store as {item.global_id}"
    return ShareReply(dry_run=False, items=[item]), text


async def share(ctx: RequestContext, body: m.Share) -> tuple[ShareReply, str]:
    if body.auto:
        return await _share_auto(ctx, body)
    assert body.id is not None
    store, memory = await _project_memory(ctx, body.id)
    score = rules.transfer_score(memory)
    if score < rules.MANUAL_SHARE_AT and not body.force:
        raise HippoError(
            "low_transfer_score",
            f"{memory.id} has transfer score {score:.2f}, below {rules.MANUAL_SHARE_AT}",
            hint="add --force to share it anyway",
        )
    from hippod.model.secrets import looks_secret

    if looks_secret(memory.content, memory.tags):
        raise HippoError(
            "secret_detected", f"{memory.id} looks like it holds a secret; it stays in this project"
        )
    now = clock.iso(clock.now())
    item, text = await _to_global(ctx, store, memory, f"{rules.SHARED}{store.project}:{now}", "share", score)
    if not item.already:
        text = f"Shared {memory.id} to the global store as {item.global_id} (transfer score {score:.2f})"
    else:
        text += f" (transfer score {score:.2f})"
    return ShareReply(dry_run=False, items=[item]), text


async def _share_auto(ctx: RequestContext, body: m.Share) -> tuple[ShareReply, str]:
    store = sqlite_only(await ctx.target_store(write=False), ctx.verb)
    if store.kind != "project":
        raise HippoError("no_project_store", f"no project store above {ctx.request.cwd}; nothing to share")
    rows = await sharing.live_rows(store.db.reader, ctx.tenant)
    chosen = await auto_share(
        store,
        sqlite_only(await ctx.global_store(), ctx.verb),
        rows,
        min_score=body.min_score,
        dry_run=body.dry_run,
    )
    items = [SharedItem(c.memory.id, c.copy_id, round(c.score, 4)) for c in chosen]
    verb = "Would share" if body.dry_run else "Shared"
    lines = [DRY_RUN] if body.dry_run else []
    lines.append(f"{verb} {plural(len(items), 'memory')} (transfer score >= {body.min_score:g})")
    lines += [
        f"  {c.memory.id}  score {c.score:.2f}  {' '.join(c.memory.content.split())[:80]}" for c in chosen
    ]
    return ShareReply(dry_run=body.dry_run, items=items), "\n".join(lines)


async def peers(ctx: RequestContext, body: m.Peers) -> tuple[PeersReply, str]:
    global_store = sqlite_only(await ctx.global_store(), ctx.verb)
    found: dict[str, Peer] = {}
    for source, created in await sharing.contributions(global_store.db.reader, ctx.tenant):
        project = rules.contributor(source)
        if project is None:
            continue
        peer = found.setdefault(project, Peer(project=project, memories=0, last=created))
        peer.memories += 1
        peer.last = max(peer.last, created)
    listed = sorted(found.values(), key=lambda p: (-p.memories, p.project))
    if not listed:
        return PeersReply(peers=[]), "No project has shared memories to the global store yet."
    width = max(len(p.project) for p in listed)
    lines = ["Projects contributing to the global store:"]
    lines += [f"  {p.project:<{width}}  {plural(p.memories, 'memory'):>12}  last {p.last}" for p in listed]
    return PeersReply(peers=listed), "\n".join(lines)


async def sync(ctx: RequestContext, body: m.Sync) -> tuple[SyncReply, str]:
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    if store.kind != "project":
        raise HippoError(
            "no_project_store", f"no project store above {ctx.request.cwd}; nothing to sync into"
        )
    global_store = sqlite_only(await ctx.global_store(), ctx.verb)
    present = set(await share_keys(store, ctx.tenant))
    rejected = await rejections.all_digests(store.db.reader, ctx.tenant)
    now = clock.iso(clock.now())
    copies: list[Memory] = []
    origins: list[str] = []
    counts = {"present": 0, "rejected": 0, "other": 0}
    for memory in await sharing.live_rows(global_store.db.reader, ctx.tenant):
        key = rules.share_key(memory.content)
        if key in present:
            counts["present"] += 1
        elif refused(memory.content, rejected):
            counts["rejected"] += 1
        elif (
            memory.origin_project not in (None, "", store.project)
            and not rules.reaches_every_project(memory.source)
            and not body.cross_project
        ):
            counts["other"] += 1
        else:
            # A shared copy becomes this project's own; another project's row keeps its origin.
            reaches = rules.reaches_every_project(memory.source)
            copies.append(
                rules.copy_for(
                    memory, new_id="mem_" + secrets.token_hex(6), source="sync:global", now=now,
                    origin_project=store.project if reaches else memory.origin_project,
                )
            )  # fmt: skip
            present.add(key)
            origins.append(memory.id)
    stored = await copy_in(store, copies, actor=ctx.actor, op="sync", origins=origins) if copies else []
    reply = SyncReply(
        copied=[c.id for c in stored],
        present=counts["present"],
        rejected=counts["rejected"],
        other_projects=counts["other"],
    )
    text = (
        f"Synced {plural(len(stored), 'memory')} from the global store "
        f"({reply.present} already present, {reply.rejected} rejected"
    )
    if reply.other_projects:
        text += f", {reply.other_projects} from other projects skipped: add --cross-project"
    return reply, text + ")"
