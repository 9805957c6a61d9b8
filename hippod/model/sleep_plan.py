"""What one sleep will change, computed from a snapshot of the store (sleep.md §2-§7).

The handler opens a snapshot of the store (a `Source`: store/sqlite/sleep_snapshot.py), calls plan() in a
worker thread, then hands the Plan to the store layer, which applies it in one transaction (or,
for --dry-run, only reports it). The snapshot is read a page at a time (sleep_scan.py) and the
phases ask again for the few rows they need whole (sleep_phases.py), so a large store is never
held in memory at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from hippod.base.clock import iso, parse_iso
from hippod.base.thread_stop import checkpoint
from hippod.model import conflicts as rules
from hippod.model import sleep_phases as phases
from hippod.model.decay import average_gap_days
from hippod.model.dedupe import Duplicate, Junk
from hippod.model.memory import Memory
from hippod.model.merge import Merge, build_merge
from hippod.model.sleep_scan import ARCHIVED, REFRESHED, Faded, Rebased, Scan, ScanSettings
from hippod.model.sleep_traits import Traits
from hippod.model.wordsets import Join, pairs


@dataclass(frozen=True, slots=True)
class ConflictRow:
    """A memory_conflicts row as sleep needs it."""

    id: int
    a: str
    b: str
    tenant: str
    status: str
    resolved_by: str | None


class Source(Protocol):
    """A consistent snapshot of a store, read as the plan goes."""

    def pages(self) -> Iterable[tuple[list[Memory], Sequence[Traits | None]]]:
        """Every memory, a page at a time, in storage order, with the traits kept for each one's
        text (None where none are kept, or they are another text's)."""
        ...

    def keep(self, learned: Sequence[tuple[str, Traits]]) -> None:
        """Keep the traits worked out for these memories of the last page, for the next sleep."""
        ...

    def fetch(self, ids: Sequence[str]) -> dict[str, Memory]:
        """The memories with these ids."""
        ...

    def dormant(self) -> Iterable[tuple[str, str, str]]:
        """(id, tenant, dormant_at) of every dormant memory."""
        ...

    def run_times(self) -> list[str]:
        """When the newest 20 sleeps ran."""
        ...

    def rejected(self) -> set[tuple[str, str]]:
        """(tenant, digest) of every tombstone."""
        ...

    def conflicts(self) -> list[ConflictRow]:
        """Every stored conflict."""
        ...

    def last_sleep(self) -> str | None:
        """When the previous (written) sleep ran."""
        ...

    def compared(self) -> set[str]:
        """The ids of the rows the previous sleep wrote with its own time after comparing them, and
        nothing has changed since (a store that keeps none: empty)."""
        ...


@dataclass(frozen=True, slots=True)
class Settings:
    now: datetime
    basis: str = "adaptive"
    dormant_enabled: bool = True
    retention_days: int = 180
    replay_count: int = 5
    default_half_life: float = 365.0
    dry_run: bool = False
    loss_aversion: float = 1.0
    origin_project: str | None = None
    # The one tenant a sleep covers (a key holder's request on a laptop's store); None: every tenant.
    tenant: str | None = None


@dataclass(slots=True)
class ConflictChanges:
    insert: list[rules.Detected] = field(default_factory=list)
    reopen: list[tuple[int, rules.Detected]] = field(default_factory=list)
    refresh: list[tuple[int, rules.Detected]] = field(default_factory=list)  # still open
    auto_resolve: list[int] = field(default_factory=list)
    conflicts_with: dict[str, list[str]] = field(default_factory=dict)  # id -> new list, changed only

    @property
    def open(self) -> int:
        return len(self.insert) + len(self.reopen) + len(self.refresh)

    @property
    def new(self) -> int:
        return len(self.insert) + len(self.reopen)


@dataclass(slots=True)
class Live:
    """What is left after every removal, as the reply, the run record and sharing need it."""

    count: int
    active: int  # not archived
    tenants: list[str]
    texts: dict[str, str]  # id -> content of every memory in a detected conflict
    share: list[Memory]  # the rows auto-share may copy, in storage order (its score decides)


@dataclass(slots=True)
class Plan:
    now: str
    rebased: list[Rebased]
    faded: Faded
    expired: list[tuple[str, str]]  # (id, tenant)
    replayed: list[Memory]
    merges: list[Merge]
    merge_rejected: int
    duplicates: list[Duplicate]
    junk_removed: list[Junk]
    junk_warnings: list[Junk]
    conflicts: ConflictChanges
    refreshed: list[tuple[str, float]]  # (id, strength): caches to write, of rows no later phase rewrites
    live: Live
    # Where the planner left the traits it worked out (a store that keeps them: sleep_traits.py).
    traits_file: str | None = None
    tenant: str | None = None  # the one tenant the plan covers (Settings.tenant); None: the store


def _expired(dormant: Iterable[tuple[str, str, str]], settings: Settings) -> list[tuple[str, str]]:
    if settings.retention_days <= 0:
        return []
    cutoff = settings.now - timedelta(days=settings.retention_days)
    return [(i, t) for i, t, at in dormant if at and parse_iso(at) < cutoff]


def conflict_changes(
    detected: Sequence[rules.Detected], existing: Sequence[ConflictRow], current: Mapping[str, Sequence[str]]
) -> ConflictChanges:
    """Upsert detected pairs as open (not those a user resolved), auto-resolve the rest, and the
    conflicts_with lists that follow from the open set (sleep.md §7 "Persistence").

    `current` maps live memories to their conflicts_with now; it may leave out those that have
    none and are in no detected pair, since nothing changes for them.
    """
    changes = ConflictChanges()
    by_pair = {(c.a, c.b): c for c in existing}
    detected_pairs = set()
    open_pairs: list[tuple[str, str]] = []
    for found in detected:
        detected_pairs.add((found.a, found.b))
        row = by_pair.get((found.a, found.b))
        if row is None:
            changes.insert.append(found)
        elif row.status == "resolved" and row.resolved_by == "user":
            continue
        elif row.status == "resolved":
            changes.reopen.append((row.id, found))
        else:
            changes.refresh.append((row.id, found))
        open_pairs.append((found.a, found.b))
    changes.auto_resolve = [c.id for c in existing if c.status == "open" and (c.a, c.b) not in detected_pairs]
    peers: dict[str, set[str]] = {}
    for a, b in open_pairs:
        peers.setdefault(a, set()).add(b)
        peers.setdefault(b, set()).add(a)
    for memory_id, now in current.items():
        wanted = sorted(peers.get(memory_id, ()))
        if wanted != list(now):
            changes.conflicts_with[memory_id] = wanted
    return changes


def scan_settings(source: Source, settings: Settings) -> ScanSettings:
    """What the first pass over a snapshot needs to know besides its rows."""
    last_sleep = source.last_sleep()
    return ScanSettings(
        now=settings.now,
        basis=settings.basis,
        avg_gap=average_gap_days(source.run_times()),
        dormant_enabled=settings.dormant_enabled,
        loss_aversion=settings.loss_aversion,
        default_half_life=settings.default_half_life,
        settled_through=parse_iso(last_sleep) if last_sleep else None,
        compared=source.compared() if last_sleep else frozenset(),
    )


def read_pages(source: Source, scan: Scan, *, dry_run: bool) -> None:
    """Phases 2-3: the first pass over the source's pages, into `scan`."""
    # Checkpoints between pages and phases (and in the pair joins): a stopping daemon cancels a
    # sleep whose grace ran out, and its plan ends there instead of running on in its thread.
    for page, known in source.pages():
        checkpoint()
        learned = scan.add(page, known)
        if learned and not dry_run:  # a dry run writes nothing, not even these
            source.keep(learned)


def plan(
    source: Source,
    settings: Settings,
    new_id: Callable[[], str],
    scanned: Scan | None = None,
    join: Join = pairs,
) -> Plan:
    """Phases 2-4, 6 and 8-11 on the snapshot, in order; the first pass is `scanned` when given, and
    `join` finds the pairs of merge and dedupe (both done by more than one process on a large
    store: store/sqlite/scan_process.py)."""
    scan = scanned
    if scan is None:
        scan = Scan(scan_settings(source, settings))
        read_pages(source, scan, dry_run=settings.dry_run)
    checkpoint()
    rows = phases.Rows(scan, source.fetch, join)
    expired = _expired(source.dormant(), settings)
    replayed = [] if settings.dry_run else phases.replay(scan, rows, settings.now, settings.replay_count)
    now = iso(settings.now)

    def build(members: list[Memory]) -> Merge:
        return build_merge(
            members,
            new_id=new_id(),
            now=settings.now,
            default_half_life=settings.default_half_life,
            origin_project=settings.origin_project,
            loss_aversion=settings.loss_aversion,
        )

    merges, merge_rejected = phases.merges(scan, rows, build, source.rejected())
    checkpoint()
    duplicates, deduped = phases.duplicates(scan, rows)
    checkpoint()
    junk_removed, junk_warnings, junked = phases.junk(scan, rows, deduped)
    gone = deduped | junked
    existing = source.conflicts()
    checkpoint()
    detected, involved = phases.conflicts(scan, rows, gone, [(c.a, c.b) for c in existing])
    checkpoint()
    live = [k for k in range(len(scan.words)) if k not in gone]
    current = {scan.ids[k]: scan.conflicts_with[k] for k in sorted(scan.conflicts_with) if k not in gone}
    current.update((m.id, m.conflicts_with) for m in involved.values() if m.id not in current)
    changes = conflict_changes(detected, existing, current)
    offered = sorted(set(scan.share) - gone)
    share = [rows.planned(k, rows.changed.get(k, scan.share[k])) for k in offered]
    share += [rows.changed[k] for k in live if k >= len(scan)]
    for memory in share:
        memory.conflicts_with = changes.conflicts_with.get(memory.id, memory.conflicts_with)
    rewritten = set(rows.changed) | set(rows.demoted) | gone
    return Plan(
        tenant=settings.tenant,
        now=now,
        rebased=scan.rebased,
        faded=scan.faded,
        expired=expired,
        replayed=replayed,
        merges=merges,
        merge_rejected=merge_rejected,
        duplicates=duplicates,
        junk_removed=junk_removed,
        junk_warnings=junk_warnings,
        conflicts=changes,
        refreshed=[
            (scan.ids[k], scan.strength[k])
            for k in range(len(scan))
            if scan.flags[k] & REFRESHED and k not in rewritten
        ],
        live=Live(
            count=len(live),
            active=sum(1 for k in live if k >= len(scan) or not scan.flags[k] & ARCHIVED),
            # Whose audit logs record the run: a tenant's own sleep is that tenant's alone.
            tenants=[settings.tenant]
            if settings.tenant
            else sorted({rows.tenant(k) for k in live} | {"default"}),
            texts={m.id: m.content for m in involved.values()},
            share=share,
        ),
    )
