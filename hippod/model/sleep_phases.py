"""Phases 6 and 8-11 of a sleep on its scanned snapshot: replay, merge, dedupe, junk, conflicts.

Each phase finds the pairs it cares about with the join over the scan's token numbers, then reads
only the rows of those pairs whole (`Rows`) to apply its rules, which are the same functions the
phases use on lists of memories (merge.py, dedupe.py, conflicts.py).
"""

from __future__ import annotations

import itertools
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Protocol

from hippod.base.clock import iso, parse_iso
from hippod.model import conflicts as rules
from hippod.model import decay, dedupe, merge, string_column
from hippod.model.digest import digests
from hippod.model.memory import Memory
from hippod.model.sleep_scan import (
    COMPARED,
    CONFLICTING,
    MERGEABLE,
    NEGATIVE,
    PARTAKES,
    POSITIVE,
    SETTLED,
    Scan,
)
from hippod.model.strength import RETRIEVAL_HALF_LIFE_BONUS
from hippod.model.tokenize import tokenize
from hippod.model.wordsets import Join, pairs

# Members of merges whose whole rows are held at once.
MERGE_BATCH = 5_000


class Fetch(Protocol):
    """Reads memories of the snapshot by id (Source.fetch)."""

    def __call__(self, ids: Sequence[str]) -> dict[str, Memory]: ...


class Rows:
    """Whole rows by survivor number, as the plan has made them so far, and the pair join that
    finds which to read.

    A row the plan changed (replayed) or made (a new semantic memory, numbered after the survivors)
    is held here; a merged episode only by its change (`demoted`), applied to its row when asked
    for; any other row is read again from the snapshot when asked for.
    """

    def __init__(self, scan: Scan, fetch: Fetch, join: Join = pairs) -> None:
        self.scan = scan
        self._fetch = fetch
        self.changed: dict[int, Memory] = {}
        self.demoted: dict[int, merge.Demoted] = {}
        self.pairs = join  # the pair join of merge and dedupe

    def get(self, numbers: Iterable[int]) -> dict[int, Memory]:
        wanted = sorted(set(numbers))
        ids = self.scan.ids
        read = self._fetch([ids[k] for k in wanted if k not in self.changed])
        got: dict[int, Memory] = {}
        for k in wanted:
            held = self.changed[k] if k in self.changed else self.scan.prepare(k, read[ids[k]])
            got[k] = self.planned(k, held)
        return got

    def planned(self, k: int, held: Memory) -> Memory:
        """Row k as the plan has made it, given the row as held otherwise: changed, or as read."""
        return self.demoted[k].onto(held) if k in self.demoted else held

    def tenant(self, k: int) -> str:
        return self.changed[k].tenant_id if k >= len(self.scan) else self.scan.tenant(k)

    def strength(self, k: int) -> float:
        if k in self.demoted:
            return self.demoted[k].strength
        return self.changed[k].strength if k in self.changed else self.scan.strength[k]

    def fresh(self) -> list[bool]:
        """Per row of the scan's word column: changed since the previous sleep (a merge's new and
        demoted memories are), so the previous sleep has not compared it with the others."""
        scan = self.scan
        through = scan.settings.settled_through
        flags = [not scan.flags[k] & SETTLED for k in range(len(scan))]
        flags += [True] * (len(scan.words) - len(scan))
        # A demotion is the row's latest change: after the others in this order.
        stamps = [(k, m.updated_at) for k, m in self.changed.items()]
        stamps += [(k, d.updated_at) for k, d in self.demoted.items()]
        later: dict[str, bool] = {}  # a merge's rows share one stamp: each stamp parsed once
        for k, stamp in stamps:
            if stamp not in later:
                later[stamp] = through is None or parse_iso(stamp) >= through
            flags[k] = later[stamp]
        return flags


def replay(scan: Scan, rows: Rows, now: datetime, count: int) -> list[Memory]:
    """Phase 6: strengthen the sampled survivors, as memories.strengthen(retrieval=False) does in SQL.

    A replay is not a retrieval: `retrieval_count` counts the times a memory was handed out (recall,
    `retrieved Nx`, the dashboard, the transfer score of auto-share), so replay leaves it alone.
    """
    picked = [scan.replay_pool[p] for p in decay.replay_picks(scan.replay_weights, now, count)]
    got = rows.get(picked)
    stamp = iso(now)
    for k in picked:
        memory = got[k]
        memory.last_retrieved = stamp
        memory.half_life_days += RETRIEVAL_HALF_LIFE_BONUS
        memory.strength = 1.0
        if memory.confidence == "stale":
            memory.confidence = "observed"
        rows.changed[k] = memory
    return [got[k] for k in picked]


def _by_tenant(rows: Rows, numbers: Iterable[int]) -> list[tuple[str, array[int]]]:
    """The numbered rows grouped by tenant, the tenants sorted (each phase compares a tenant's rows
    with each other only). Arrays, not lists: a daily sleep asks for a million rows."""
    scan = rows.scan
    made = [m.tenant_id for k, m in rows.changed.items() if k >= len(scan)]
    if len(scan.tenant_names) == 1 and all(t == scan.tenant_names[0] for t in made):
        # One tenant, as a laptop's store mostly is: no lookup per row.
        every = array("q", numbers)
        return [(scan.tenant_names[0], every)] if every else []
    grouped: defaultdict[str, array[int]] = defaultdict(lambda: array("q"))
    for k in numbers:
        grouped[rows.tenant(k)].append(k)
    return sorted(grouped.items())


def merges(
    scan: Scan,
    rows: Rows,
    build: Callable[[list[Memory]], merge.Merge],
    rejected: AbstractSet[tuple[str, str]],
) -> tuple[list[merge.Merge], int]:
    """Phase 8: the clusters of merge.clusters, merged unless the tenant rejected the digest;
    (merges, rejected count). Members are demoted and new memories numbered after the survivors."""
    fresh = rows.fresh()
    clusters: list[list[int]] = []
    # A row's position in its tenant's `order`: one array for every tenant (a dict of a million rows
    # would be a hundred megabytes).
    place = array("l", bytes(array("l").itemsize * len(scan)))
    for _, numbers in _by_tenant(rows, (k for k in range(len(scan)) if scan.flags[k] & MERGEABLE)):
        order = string_column.order(numbers, scan.created, scan.ids)
        for at, k in enumerate(order):
            place[k] = at
        close = rows.pairs(scan.words, order, merge.MERGE_AT, probe=fresh)
        walked = merge.walk(
            [(min(place[i], place[j]), max(place[i], place[j])) for i, j in close],
            [not fresh[k] for k in order],
        )
        clusters += [[order[at] for at in members] for members in walked]
    made: list[merge.Merge] = []
    refused = 0
    # Whole rows a batch of clusters at a time: a first sleep of a million merges a hundred thousand.
    for batch in _batches(clusters, MERGE_BATCH):
        got = rows.get(k for members in batch for k in members)
        for members in batch:
            built = build([got[k] for k in members])
            tenant = built.semantic.tenant_id
            if any((tenant, d) in rejected for d in digests(built.semantic.content)):
                refused += 1
                continue
            made.append(built)
            rows.demoted.update(zip(members, built.members, strict=True))
            rows.changed[scan.words.append(tokenize(built.semantic.content))] = built.semantic
    return made, refused


def _batches(clusters: list[list[int]], size: int) -> Iterator[list[list[int]]]:
    """The clusters in order, in runs of about `size` members (a run holds one cluster at least)."""
    batch: list[list[int]] = []
    held = 0
    for members in clusters:
        batch.append(members)
        held += len(members)
        if held >= size:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def duplicates(scan: Scan, rows: Rows) -> tuple[list[dedupe.Duplicate], set[int]]:
    """Phase 9: dedupe.dedupe on the scan; (duplicates, numbers deleted)."""
    fresh = rows.fresh()
    compared = itertools.chain(
        (k for k in range(len(scan)) if scan.flags[k] & COMPARED), range(len(scan), len(scan.words))
    )
    found: list[dedupe.Duplicate] = []
    deleted: set[int] = set()
    for _, numbers in _by_tenant(rows, compared):
        close = rows.pairs(scan.words, numbers, dedupe.DUPLICATE_ABOVE, strict=True, probe=fresh)
        got = rows.get(k for pair in close for k in pair)
        for gone, kept, overlap in dedupe.walk(got, close):
            found.append(
                dedupe.Duplicate(got[gone], got[kept], dedupe.dedupe_kind(got[kept], got[gone]), overlap)
            )
            deleted.add(gone)
    return found, deleted


def junk(
    scan: Scan, rows: Rows, gone: AbstractSet[int]
) -> tuple[list[dedupe.Junk], list[dedupe.Junk], set[int]]:
    """Phase 10 on what dedupe left; (removed, warnings, numbers removed)."""
    removed: list[dedupe.Junk] = []
    warned: list[dedupe.Junk] = []
    numbers: set[int] = set()
    for k in sorted(scan.junk):
        if k in gone:
            continue
        to_delete, reason = scan.junk[k]
        (removed if to_delete else warned).append(dedupe.Junk(scan.ids[k], scan.tenant(k), reason))
        if to_delete:
            numbers.add(k)
    made = [k for k in range(len(scan), len(scan.words)) if k not in gone]
    more_removed, more_warned = dedupe.junk([rows.changed[k] for k in made])
    dropped = {j.id for j in more_removed}
    numbers.update(k for k in made if rows.changed[k].id in dropped)
    return removed + more_removed, warned + more_warned, numbers


def conflicts(
    scan: Scan, rows: Rows, gone: AbstractSet[int], known: Sequence[tuple[str, str]]
) -> tuple[list[rules.Detected], dict[str, Memory]]:
    """Phase 11's detection (conflicts.detect on the scan): the conflicting pairs, ordered by
    (a, b), and each memory in one, by id."""
    fresh = rows.fresh()[: len(scan)]
    flags = scan.flags
    positive = [bool(f & POSITIVE) for f in flags]
    negative = [bool(f & NEGATIVE) for f in flags]
    candidates = (
        k
        for k in range(len(scan))
        if flags[k] & CONFLICTING and k not in gone and rows.strength(k) >= rules.MIN_STRENGTH
    )
    named = {i for pair in known for i in pair}
    found: list[tuple[int, int]] = []
    for _, numbers in _by_tenant(rows, candidates):
        partaking = [k for k in numbers if flags[k] & PARTAKES]
        found += rules.opposed_pairs(scan.distinct, partaking, positive, negative, fresh)
        settled = {i: k for k in numbers if not fresh[k] and (i := scan.ids[k]) in named} if named else {}
        found += [(settled[a], settled[b]) for a, b in known if a in settled and b in settled]
    got = rows.get(k for pair in found for k in pair)
    inputs = {
        k: rules.ConflictInput(m.id, m.tenant_id, m.content, m.layer == "trace") for k, m in got.items()
    }
    judged = (rules.judge(inputs[i], inputs[j]) for i, j in found)
    detected = list({(d.a, d.b): d for d in judged if d is not None}.values())
    detected.sort(key=lambda d: (d.a, d.b))
    involved = {i for d in detected for i in (d.a, d.b)}
    return detected, {m.id: m for m in got.values() if m.id in involved}
