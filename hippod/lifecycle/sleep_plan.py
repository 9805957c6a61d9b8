"""What one sleep will change, computed from a snapshot of the store (sleep.md §2-§7). Pure.

The handler reads a Snapshot, calls plan(), then hands the Plan to the store layer, which applies
it in one transaction (or, for --dry-run, only reports it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from hippod.clock import iso, parse_iso
from hippod.lifecycle import conflicts as rules
from hippod.lifecycle.decay import DecayResult, average_gap_days, decay_pass, rebase, replay_sample
from hippod.lifecycle.dedupe import Duplicate, Junk, dedupe, junk
from hippod.lifecycle.digest import digests
from hippod.lifecycle.merge import Merge, build_merge, clusters, merge_candidate
from hippod.lifecycle.strength import RETRIEVAL_HALF_LIFE_BONUS
from hippod.store.records import Memory


@dataclass(frozen=True, slots=True)
class ConflictRow:
    """A memory_conflicts row as sleep needs it."""

    id: int
    a: str
    b: str
    tenant: str
    status: str
    resolved_by: str | None


@dataclass(slots=True)
class Snapshot:
    memories: list[Memory]
    dormant: list[tuple[str, str, str]]  # (id, tenant, dormant_at)
    run_times: list[str]
    rejected: set[tuple[str, str]]  # (tenant, digest)
    conflicts: list[ConflictRow]
    last_sleep: str | None = None  # when the previous (written) sleep ran


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
class Plan:
    now: str
    rebased: list[tuple[Memory, float]]
    decay: DecayResult
    expired: list[tuple[str, str]]  # (id, tenant)
    replayed: list[Memory]
    merges: list[Merge]
    merge_rejected: int
    duplicates: list[Duplicate]
    junk_removed: list[Junk]
    junk_warnings: list[Junk]
    conflicts: ConflictChanges
    live: list[Memory]  # what is left after every removal, for sharing and the count

    @property
    def refreshed(self) -> list[Memory]:
        """Survivors whose strength cache changed and that no later phase deletes or rewrites."""
        gone = {d.deleted.id for d in self.duplicates} | {j.memory.id for j in self.junk_removed}
        gone |= {m.id for m in self.replayed} | {m.id for merge in self.merges for m in merge.members}
        return [m for m in self.decay.refreshed if m.id not in gone]


def _replay(survivors: list[Memory], settings: Settings) -> list[Memory]:
    if settings.dry_run or settings.replay_count <= 0:
        return []
    chosen = replay_sample(survivors, settings.now, settings.replay_count)
    now = iso(settings.now)
    for memory in chosen:  # the same change memories.strengthen makes in SQL
        memory.retrieval_count += 1
        memory.last_retrieved = now
        memory.half_life_days += RETRIEVAL_HALF_LIFE_BONUS
        memory.strength = 1.0
        if memory.confidence == "stale":
            memory.confidence = "observed"
    return chosen


def _expired(dormant: Sequence[tuple[str, str, str]], settings: Settings) -> list[tuple[str, str]]:
    if settings.retention_days <= 0:
        return []
    cutoff = settings.now - timedelta(days=settings.retention_days)
    return [(i, t) for i, t, at in dormant if at and parse_iso(at) < cutoff]


def _merges(
    survivors: list[Memory], snapshot: Snapshot, settings: Settings, new_id: Callable[[], str]
) -> tuple[list[Merge], int]:
    merges: list[Merge] = []
    rejected = 0
    now = iso(settings.now)
    settled_through = parse_iso(snapshot.last_sleep) if snapshot.last_sleep else None
    for members in clusters([m for m in survivors if merge_candidate(m)], settled_through):
        merge = build_merge(
            members,
            new_id=new_id(),
            now=now,
            default_half_life=settings.default_half_life,
            origin_project=settings.origin_project,
        )
        tenant = merge.semantic.tenant_id
        if any((tenant, d) in snapshot.rejected for d in digests(merge.semantic.content)):
            rejected += 1
            continue
        merges.append(merge)
    return merges, rejected


def conflict_changes(
    detected: Sequence[rules.Detected], existing: Sequence[ConflictRow], live: Sequence[Memory]
) -> ConflictChanges:
    """Upsert detected pairs as open (not those a user resolved), auto-resolve the rest, and the
    conflicts_with lists that follow from the open set (sleep.md §7 "Persistence")."""
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
    for memory in live:
        wanted = sorted(peers.get(memory.id, ()))
        if wanted != memory.conflicts_with:
            changes.conflicts_with[memory.id] = wanted
    return changes


def conflict_inputs(rows: Sequence[Memory]) -> list[rules.ConflictInput]:
    """Conflict candidates (sleep.md §7): not semantic, strength >= 0.05, not superseded, no
    `extracted` tag; buffer and archived rows take no part either (our choice)."""
    return [
        rules.ConflictInput(m.id, m.tenant_id, m.content, m.layer == "trace")
        for m in rows
        if m.layer not in ("semantic", "buffer")
        and m.kind != "archived"
        and m.strength >= 0.05
        and m.superseded_by is None
        and "extracted" not in m.tags
    ]


def plan(snapshot: Snapshot, settings: Settings, new_id: Callable[[], str]) -> Plan:
    """Phases 2-4, 6 and 8-11 on the snapshot, in order; the snapshot's Memory objects are updated."""
    rebased = [(m, rebase(m, settings.default_half_life)) for m in snapshot.memories if m.legacy_base]
    for memory, half_life in rebased:
        memory.half_life_days = half_life
        memory.legacy_base = False
    decay = decay_pass(
        snapshot.memories,
        settings.now,
        basis=settings.basis,
        avg_gap=average_gap_days(snapshot.run_times),
        dormant_enabled=settings.dormant_enabled,
        loss_aversion=settings.loss_aversion,
    )
    expired = _expired(snapshot.dormant, settings)
    replayed = _replay(decay.survivors, settings)
    merges, merge_rejected = _merges(decay.survivors, snapshot, settings, new_id)
    demoted = {m.id: m for merge in merges for m in merge.members}
    for memory in demoted.values():
        memory.strength = memory.strength_at(settings.now, settings.loss_aversion).strength
    rows = [demoted.get(m.id, m) for m in decay.survivors] + [merge.semantic for merge in merges]
    settled_through = parse_iso(snapshot.last_sleep) if snapshot.last_sleep else None
    duplicates = dedupe(rows, settled_through)
    deleted = {d.deleted.id for d in duplicates}
    rows = [m for m in rows if m.id not in deleted]
    junk_removed, junk_warnings = junk(rows)
    deleted = {j.memory.id for j in junk_removed}
    rows = [m for m in rows if m.id not in deleted]
    settled = {m.id for m in rows if parse_iso(m.updated_at) < settled_through} if settled_through else set()
    detected = rules.detect(conflict_inputs(rows), settled, [(c.a, c.b) for c in snapshot.conflicts])
    changes = conflict_changes(detected, snapshot.conflicts, rows)
    for memory in rows:
        if memory.id in changes.conflicts_with:
            memory.conflicts_with = changes.conflicts_with[memory.id]
    return Plan(
        now=iso(settings.now),
        rebased=rebased,
        decay=decay,
        expired=expired,
        replayed=replayed,
        merges=merges,
        merge_rejected=merge_rejected,
        duplicates=duplicates,
        junk_removed=junk_removed,
        junk_warnings=junk_warnings,
        conflicts=changes,
        live=rows,
    )
