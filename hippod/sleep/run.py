"""Sleep's run of one store (sleep.md §1-§9), which the `sleep` verb, the daily run and the hooks call:
every phase, and the run a second request for the same store joins."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import msgspec

from hippoctl.protocol.replies_lifecycle import SleepReply
from hippod.agentnotes.importer import import_store
from hippod.base import clock, heap
from hippod.base.tenancy import REQUEST_TENANT, daemon_tenant
from hippod.calls.daemon_view import DaemonView, Say
from hippod.ingest.gitrun import learn_from_git
from hippod.mirrors import conflict_mirror
from hippod.mirrors.mirror_text import render
from hippod.mirrors.mirrors import dormant_file
from hippod.model.merge import new_semantic_id
from hippod.model.sleep_plan import Plan, Settings
from hippod.sleep import extraction, sleep_report
from hippod.sleep.auto_share import AutoShared, auto_share, auto_share_score, names_of
from hippod.store.roots import DB_NAME
from hippod.store.sqlite import ledger, sleep_traits
from hippod.store.stores import SqliteStore, Store, sqlite_only
from hippod.teamlink.membership import in_team
from hippod.teamlink.shares import queue_shares

log = logging.getLogger("hippod.sleep")


# Phase 12's threshold on transfer_score (sleep.md §8).
AUTO_SHARE_MIN = 0.6


@dataclass(frozen=True, slots=True)
class SleepOptions:
    dry_run: bool = False
    no_learn: bool = False
    no_share: bool = False
    # The daily run learns from git itself first, so its sleeps skip phase 1's git part.
    git: bool = True
    # Send a line to `say` as each phase is written (the `sleep` verb shows them on stderr).
    progress: bool = False
    # HIPPO_AGENT_MEMORY_TOOLS of the request that asked for the sleep, if any: it chooses the
    # tools phase 1 imports from (the daemon's own environment otherwise).
    agent_tools: str | None = None
    # On a laptop's store, the one tenant a key holder's sleep covers (it plans and writes that
    # tenant's rows alone, as every sleep of the team store does); None: the whole store.
    tenant: str | None = None
    # The tenant whose memories phase 7 may send when the sleep covers the whole store: the one the
    # request acts as. None (a sleep the daemon starts itself): the daemon owner's tenant. Another
    # tenant's memories are sent only by that tenant's own sleep (`tenant`).
    extraction_tenant: str | None = None

    @property
    def join_key(self) -> bool:
        """Any request for a store joins the sleep queued or running for it (sleep.md §1), but a dry
        run and a real one never join each other."""
        return self.dry_run


@dataclass
class _Run:
    task: asyncio.Task[SleepReply]
    waiters: int = 0
    committed: bool = False
    # The files its planners left the traits in (store/sqlite/sleep_traits.py), removed at its end.
    spills: list[str | None] = field(default_factory=list)


def _sleep_key(store: Store, options: SleepOptions) -> str:
    """What one sleep covers: a store, or one tenant of it (always so on the team store)."""
    if store.team:
        return f"{store.root}#{REQUEST_TENANT.get()}"
    return store.root if options.tenant is None else f"{store.root}#{options.tenant}"


async def sleep_store(
    state: DaemonView, store: Store, options: SleepOptions, say: Say | None = None
) -> SleepReply:
    """Run every phase of sleep.md §2 on one store and return its results.

    A request for a store whose sleep (with the same options) is queued or running joins that run
    and gets the same reply. A waiter that is cancelled before the run commits cancels it only
    when nobody else waits for it.
    """
    runs: dict[tuple[str, bool], _Run] = state.sleep_runs
    key = (_sleep_key(store, options), options.join_key)
    run = runs.get(key)
    if run is None:
        holder: list[_Run] = []
        task = asyncio.get_running_loop().create_task(_locked_run(state, store, options, say, holder))
        run = _Run(task)
        holder.append(run)
        runs[key] = run
        task.add_done_callback(lambda _t: runs.pop(key, None) if runs.get(key) is run else None)
    run.waiters += 1
    try:
        return await asyncio.shield(run.task)
    except asyncio.CancelledError:
        if run.waiters == 1 and not run.committed and not run.task.done():
            run.task.cancel()
            # The run unwinds before this waiter's cancel goes on (its planner killed and reaped,
            # its transaction rolled back): a stopping daemon waits for its requests, not for runs.
            await asyncio.wait({run.task})
        raise
    finally:
        run.waiters -= 1


async def _locked_run(
    state: DaemonView, store: Store, options: SleepOptions, say: Say | None, holder: list[_Run]
) -> SleepReply:
    lock = state.sleep_locks.setdefault(_sleep_key(store, options), asyncio.Lock())
    async with lock:
        # Before as well as after (off the loop: malloc_trim walks the heap): what the work since the
        # last sleep left pinned (heap.give_back) would otherwise be the floor of this one's peak.
        await asyncio.to_thread(heap.give_back)
        try:
            return await _sleep(state, store, options, say if options.progress else None, holder[0])
        finally:
            for path in holder[0].spills:
                sleep_traits.discard(path)
            await asyncio.to_thread(heap.give_back)


# --- phases that belong to other work: clear hook points, no-ops for now ---------------------------


async def learn_and_import(state: DaemonView, store: SqliteStore, options: SleepOptions) -> tuple[int, int]:
    """Phase 1: learn from git (1 day) and import agent notes (ingest.md §4-5); (lessons, notes).

    Either part failing (git missing, a tool folder unreadable) is logged and leaves the sleep to go on.
    """
    learned = 0
    project = os.path.dirname(store.root)
    wanted = options.git and store.kind != "global" and store.config.get("autoLearnOnSleep", True)
    if wanted and os.path.exists(os.path.join(project, ".git")):
        try:
            learned = len((await learn_from_git(state, store, [project], 1)).lessons)
        except Exception:
            log.exception("sleep of %s: learning from git failed", store.root)
    try:
        env = dict(os.environ)
        if options.agent_tools is not None:
            env["HIPPO_AGENT_MEMORY_TOOLS"] = options.agent_tools
        imported = await import_store(state, store, env)
    except Exception:
        log.exception("sleep of %s: importing agent notes failed", store.root)
        imported = 0
    return learned, imported


async def promote_traces(store: Store) -> int:
    """Phase 5: trace promotion of completed sessions (continuity.md §2). Not built yet: 0."""
    return 0


async def finish_compactions(store: Store) -> int:
    """Phase 13: finish pending compaction spool items (ingest.md §8). Not built yet: 0."""
    return 0


async def prune_ledger(conn: Any, now: datetime) -> int:
    """Phase 14: drop token-ledger rows past their 90 days (continuity.md §6); the global store only."""
    before = (now - timedelta(days=ledger.KEEP_DAYS)).astimezone().isoformat(timespec="milliseconds")
    return await ledger.prune(conn, before)


# --- the run ----------------------------------------------------------------------------------------


def _settings(state: DaemonView, store: Store, options: SleepOptions) -> Settings:
    config = store.config
    dormant: dict[str, Any] = config.get("dormant", {})
    return Settings(
        now=clock.now(),
        basis=str(config.get("decayBasis", "adaptive")),
        dormant_enabled=bool(dormant.get("enabled", True)),
        retention_days=int(dormant.get("retentionDays", 180)),
        replay_count=int(config.get("replay", {}).get("count", 5)),
        default_half_life=float(config.get("defaultHalfLifeDays", 365)),
        dry_run=options.dry_run,
        loss_aversion=state.loss_aversion,
        origin_project=store.project,
        tenant=None if store.team else options.tenant,
    )


def _reply(
    result: Plan, options: SleepOptions, shared: list[AutoShared], learned: tuple[int, int]
) -> SleepReply:
    return sleep_report.build(
        result, dry_run=options.dry_run, shared=shared, learned=learned[0], agent_notes=learned[1]
    )


async def _sleep(
    state: DaemonView, store: Store, options: SleepOptions, say: Say | None, run: _Run
) -> SleepReply:
    started = time.monotonic()

    async def step(line: str) -> None:
        if say is not None:
            await say(line)

    # A team store has no project folder or agent notes to learn from; what a project or its agents
    # teach is its owner's, never a tenant's own sleep's.
    skip_learn = options.dry_run or options.no_learn or options.tenant is not None
    own = store if isinstance(store, SqliteStore) and not skip_learn else None
    learned = (0, 0) if own is None else await learn_and_import(state, own, options)
    settings = _settings(state, store, options)
    rows = store.sleeps
    # Phase 7's calls come first, outside any transaction; what they bring is written with the plan.
    extracted = await _ask_model(store, options)
    result, marks, statuses = await rows.planned(store.db, settings, new_semantic_id)
    run.spills.append(result.traits_file)
    await step(f"sleep: planned {result.live.count} live memories")
    planned = time.monotonic()
    if options.dry_run:
        shared, queued = await _share_phase(state, store, options, result, dry_run=True)
        reply = _reply(result, options, shared, learned)
        reply.shared_team = queued
        sleep_report.add_extraction(reply, extracted, None)
        log.info("sleep (dry run) of %s: plan %.2fs", store.root, planned - started)
        return reply
    await promote_traces(store)
    async with store.db.long_transaction() as conn:
        if await rows.changed_since(conn, marks, statuses):
            # Something changed the store since the snapshot: plan again, now holding the store (SQLite's
            # write lock; on the team store, the tenant's sleep lock and rows), from a snapshot that
            # sees what this transaction sees (it has written nothing yet).
            await step("sleep: the store changed meanwhile; planning again")
            result, _, _ = await rows.planned(store.db, settings, new_semantic_id, conn)
            run.spills.append(result.traits_file)
        await rows.apply(conn, result, dormant_at=result.now, step=step)
        facts = None
        if isinstance(store, SqliteStore) and (extracted.answered or extracted.refused):
            await step("sleep: writing phase 7 (extraction)")
            facts = await extraction.write(conn, store, extracted, result.now)
        reply = _reply(result, options, [], learned)
        sleep_report.add_extraction(reply, extracted, facts)
        await finish_compactions(store)
        if store.kind == "global" and not store.team and options.tenant is None:  # the owner's ledger
            await prune_ledger(conn, settings.now)
        await step("sleep: recording the run")
        results = msgspec.to_builtins(sleep_report.counts_only(reply))
        await rows.record(
            conn, now=result.now, results=results, tenants=result.live.tenants, only_tenant=settings.tenant
        )
    run.committed = True
    written = time.monotonic()
    if isinstance(store, SqliteStore):  # a team store has no mirror files
        await _after_commit(store, result)
        if facts is not None:
            store.written(facts.facts)
    shared, reply.shared_team = await _share_phase(state, store, options, result, dry_run=False)
    sleep_report.add_shared(reply, shared)
    if reply.shared:
        async with store.db.transaction() as conn:
            await rows.set_shared(conn, reply.shared)
    if isinstance(store, SqliteStore) and result.traits_file is not None:
        await step("sleep: keeping the traits of new texts for the next sleep")
        await _keep_traits(store, result.traits_file)
    log.info(
        "sleep of %s: %d live memories; plan %.2fs, write %.2fs, share and keep %.2fs",
        store.root,
        reply.active,
        planned - started,
        written - planned,
        time.monotonic() - written,
    )
    return reply


async def _keep_traits(store: SqliteStore, path: str) -> None:
    """Copy the traits the planner worked out into the store, after the sleep committed. A failure
    (a full disk, say) is logged and costs only their working out again at the next sleep."""
    try:
        await sleep_traits.keep(store.db, path)
    except Exception as exc:
        log.warning("sleep of %s: its traits were not kept (%s)", store.root, exc)


async def _ask_model(store: Store, options: SleepOptions) -> extraction.Extraction:
    """Phase 7's calls, made before the sleep's transaction. A laptop's store alone: the team
    store holds copies of what members shared, whose own laptops extract from their originals."""
    if not isinstance(store, SqliteStore):
        return extraction.Extraction()
    tenant = options.tenant or options.extraction_tenant or daemon_tenant()
    return await extraction.ask(store, tenant, dry_run=options.dry_run)


async def _share_phase(
    state: DaemonView, store: Store, options: SleepOptions, result: Plan, *, dry_run: bool
) -> tuple[list[AutoShared], int]:
    """Phase 12, after the project commit (the global store is another database): (what was copied
    to the global store, how many memories were queued for the team server)."""
    if (
        options.no_share
        or options.tenant is not None  # sharing onward is the store owner's choice
        or store.kind == "global"
        or not isinstance(store, SqliteStore)  # the team store: shared already
        or not store.config.get("autoShareOnSleep", True)
    ):
        return [], 0
    registry = state.registry
    global_store: SqliteStore | None = None
    if not dry_run or os.path.isfile(os.path.join(registry.global_root, DB_NAME)):
        global_store = sqlite_only(await registry.open(registry.global_root), "auto-share")
    copied = await auto_share(
        store, global_store, result.live.share, min_score=AUTO_SHARE_MIN, dry_run=dry_run
    )
    queued = 0
    if global_store is not None and store.config.get("autoShareToTeam", False) and in_team(registry):
        # The same choice as for the global store, but each memory once whatever the global store
        # holds already: the team may not have what this user shared before joining it.
        names = await names_of(store)
        eligible = [m for m in result.live.share if auto_share_score(m, AUTO_SHARE_MIN, names) is not None]
        queued = sum(await queue_shares(state, eligible, dry_run=dry_run))
    return copied, queued


async def _after_commit(store: SqliteStore, result: Plan) -> None:
    """Mirrors: changed and new memories, removed ones, dormant copies, conflicts, stats.json; then
    every mirror checked against the database."""
    faded = result.faded
    gone = [m.id for m, _ in (*faded.dormant, *faded.secret_deleted, *faded.deleted)]
    gone += [d.deleted.id for d in result.duplicates] + [j.id for j in result.junk_removed]
    store.mirrors.deleted(gone)
    store.written([merge.semantic for merge in result.merges])
    # Not the rows whose strength cache a sleep writes: a mirror holds no strength (mirror_text.py).
    changed = {m.id for m in result.replayed}
    changed |= {m.id for merge in result.merges for m in merge.members} | {r.id for r in result.rebased}
    changed |= set(result.conflicts.conflicts_with)
    store.mirrors.changed_ids(changed - set(gone))
    files: dict[str, str | None] = {}
    for memory, _ in faded.dormant:
        files[dormant_file(memory.id)] = render(memory)
    for memory_id, _ in result.expired:
        files[dormant_file(memory_id)] = None
    files.update(await conflict_mirror.files(store.db.reader))
    store.mirrors.files(files)
    store.mirrors.heal()
