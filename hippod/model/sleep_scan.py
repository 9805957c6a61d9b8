"""A sleep's first pass over its snapshot, a page at a time (sleep.md §3-§7).

Each memory is rebased and decayed as it is read (phases 2-3). A faded one is kept whole, since the
plan moves or deletes it and the reply quotes it. A survivor leaves only what the later phases ask
of every memory: its id, tenant, strength and a few flags, its tokens as numbers (merge and dedupe)
and its distinctive tokens (conflicts), its replay weight, and its junk verdict. The rest of its
row is dropped with the page; the phases read the few whole rows they need again by number.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime

from hippod.base.clock import parse_iso
from hippod.base.thread_stop import checkpoint
from hippod.model import decay, merge, share
from hippod.model.memory import Memory
from hippod.model.sleep_traits import Traits, traits_of
from hippod.model.string_column import StringColumn
from hippod.model.wordsets import TokenColumn

# Flags of a survivor.
SETTLED = 1  # unchanged since the previous sleep compared it with the others
MERGEABLE = 2  # a merge candidate (sleep.md §5.1)
COMPARED = 4  # takes part in dedupe: not superseded
PROTECTED = 8
CONFLICTING = 16  # a conflict candidate but for its strength, which merging may still lower
TRACE = 32
POSITIVE = 64  # its window holds a P phrase of some conflict rule
NEGATIVE = 128  # ... and an N phrase
ARCHIVED = 256
REFRESHED = 512  # its strength cache lags by decay.CACHE_DRIFT or more: the store gets the live value
PARTAKES = 1024  # a conflict candidate that can be one side of a conflict (conflicts.takes_part)


@dataclass(frozen=True, slots=True)
class Rebased:
    """A legacy row's one-time half-life (sleep.md §3.4)."""

    id: str
    tenant: str
    half_life: float


@dataclass(slots=True)
class Faded:
    """Rows below the decay floor, with their sleep-basis strength (sleep.md §3.2)."""

    dormant: list[tuple[Memory, float]] = field(default_factory=list)
    secret_deleted: list[tuple[Memory, float]] = field(default_factory=list)
    deleted: list[tuple[Memory, float]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.dormant) + len(self.secret_deleted) + len(self.deleted)


@dataclass(frozen=True, slots=True)
class ScanSettings:
    now: datetime
    basis: str
    avg_gap: float
    dormant_enabled: bool
    loss_aversion: float
    default_half_life: float
    settled_through: datetime | None
    # Rows written at `settled_through` exactly that the previous sleep wrote itself, after comparing them.
    compared: AbstractSet[str] = frozenset()


class Scan:
    """The survivors of one sleep's decay pass, numbered 0.. in the snapshot's order."""

    def __init__(self, settings: ScanSettings) -> None:
        self.settings = settings
        self.rebased: list[Rebased] = []
        self.faded = Faded()
        self.ids = StringColumn()
        self.tenant_names: list[str] = []
        self._tenant_numbers: dict[str, int] = {}
        self.tenants: array[int] = array("i")
        self.flags: array[int] = array("H")
        self.strength: array[float] = array("d")
        self.created = StringColumn()  # of merge candidates ("" for others): the merge walks them by it
        self.words = TokenColumn()  # tokens (recall.md §3) of every survivor; empty when superseded
        self.distinct = TokenColumn()  # distinctive tokens (sleep.md §7.1) of conflict candidates
        self.junk: dict[int, tuple[bool, str]] = {}  # number -> (to delete, reason)
        self.conflicts_with: dict[int, list[str]] = {}  # only the non-empty lists
        self.share: dict[int, Memory] = {}  # rows scoring high enough for auto-share as read
        self.replay_pool: array[int] = array("i")
        self.replay_weights: array[float] = array("d")

    def __len__(self) -> int:
        return len(self.ids)

    def tenant(self, k: int) -> str:
        return self.tenant_names[self.tenants[k]]

    def add(self, page: list[Memory], known: Sequence[Traits | None]) -> list[tuple[str, Traits]]:
        """Rebase and decay a page of memories and keep what the later phases need of each.

        `known` holds each memory's traits as a previous sleep kept them (None: not kept, or kept
        for another text). Returns (id, traits) of the survivors whose traits were worked out here.
        """
        settings = self.settings
        kept = {memory.id: traits for memory, traits in zip(page, known, strict=True)}
        learned: list[tuple[str, Traits]] = []
        for memory in page:
            self._rebase(memory)
        result = decay.decay_pass(
            page,
            settings.now,
            basis=settings.basis,
            avg_gap=settings.avg_gap,
            dormant_enabled=settings.dormant_enabled,
            loss_aversion=settings.loss_aversion,
        )
        self.faded.dormant += result.dormant
        self.faded.secret_deleted += result.secret_deleted
        self.faded.deleted += result.deleted
        refreshed = {id(m) for m in result.refreshed}
        words: list[str] = []
        distinct: list[str] = []
        for memory in result.survivors:
            traits = kept[memory.id]
            if traits is None:
                checkpoint()  # a long memory takes milliseconds; a page of them, seconds
                traits = traits_of(memory.content)
                learned.append((memory.id, traits))
            self._keep(memory, traits, id(memory) in refreshed)
            words.append(traits.words if self.flags[-1] & COMPARED else "")
            distinct.append(traits.distinct if self.flags[-1] & CONFLICTING else "")
        # The page's token rows are numbered at once, in the survivors' order (one row each).
        self.words.extend_joined(words)
        self.distinct.extend_joined(distinct)
        return learned

    def extend(self, other: Scan) -> None:
        """Take the survivors of a scan of the pages after this one's (the same settings), numbered
        after this one's: what one scan of both would hold. `other` gives up its columns, most of
        its size, as each is taken: a half of a million is not held twice meanwhile."""
        n = len(self)
        self.words.extend_column(other.words)
        other.words = TokenColumn()
        self.distinct.extend_column(other.distinct)
        other.distinct = TokenColumn()
        self.ids.extend(other.ids)
        other.ids = StringColumn()
        self.created.extend(other.created)
        other.created = StringColumn()
        self.rebased += other.rebased
        self.faded.dormant += other.faded.dormant
        self.faded.secret_deleted += other.faded.secret_deleted
        self.faded.deleted += other.faded.deleted
        tenants: list[int] = []  # other's tenant numbers in this scan
        for name in other.tenant_names:
            if name not in self._tenant_numbers:
                self._tenant_numbers[name] = len(self.tenant_names)
                self.tenant_names.append(name)
            tenants.append(self._tenant_numbers[name])
        if tenants == list(range(len(tenants))):
            self.tenants += other.tenants
        else:
            self.tenants.extend(tenants[t] for t in other.tenants)
        self.flags += other.flags
        self.strength += other.strength
        self.junk.update((k + n, verdict) for k, verdict in other.junk.items())
        self.conflicts_with.update((k + n, peers) for k, peers in other.conflicts_with.items())
        self.share.update((k + n, memory) for k, memory in other.share.items())
        self.replay_pool.extend(k + n for k in other.replay_pool)
        self.replay_weights += other.replay_weights

    def prepare(self, k: int, memory: Memory) -> Memory:
        """A survivor's row read again, made what the first pass made of it (rebased, decayed)."""
        self._rebase(memory, record=False)
        memory.strength = self.strength[k]
        return memory

    def _rebase(self, memory: Memory, *, record: bool = True) -> None:
        if not memory.legacy_base:
            return
        memory.half_life_days = decay.rebase(memory, self.settings.default_half_life)
        memory.legacy_base = False
        if record:
            self.rebased.append(Rebased(memory.id, memory.tenant_id, memory.half_life_days))

    def _keep(self, memory: Memory, traits: Traits, refreshed: bool) -> None:
        k = len(self.ids)
        self.ids.append(memory.id)
        tenant = self._tenant_numbers.setdefault(memory.tenant_id, len(self._tenant_numbers))
        if tenant == len(self.tenant_names):
            self.tenant_names.append(memory.tenant_id)
        self.tenants.append(tenant)
        self.strength.append(memory.strength)
        flags = REFRESHED if refreshed else 0
        through = self.settings.settled_through
        if through is not None:
            written = parse_iso(memory.updated_at)
            if written < through or (written == through and memory.id in self.settings.compared):
                flags |= SETTLED
        if decay.is_protected(memory):
            flags |= PROTECTED
        if memory.kind == "archived":
            flags |= ARCHIVED
        if memory.superseded_by is None:
            flags |= COMPARED
        mergeable = merge.merge_candidate(memory)
        if mergeable:
            flags |= MERGEABLE
        self.created.append(memory.created if mergeable else "")
        flags |= self._conflict_flags(memory, traits)
        self.flags.append(flags)
        if not flags & PROTECTED and (traits.junk is not None or traits.warning is not None):
            self.junk[k] = (traits.junk is not None, traits.junk or traits.warning or "")
        if memory.conflicts_with:
            self.conflicts_with[k] = memory.conflicts_with
        if share.transfer_score(memory) >= share.AUTO_SHARE_AT:
            self.share[k] = memory
        if decay.replay_eligible(memory):
            self.replay_pool.append(k)
            self.replay_weights.append(decay.replay_weight(memory, self.settings.now, memory.strength))

    def _conflict_flags(self, memory: Memory, traits: Traits) -> int:
        """Conflict candidacy (sleep.md §7; strength is checked after merging) and the rule sides."""
        candidate = (
            memory.layer not in ("semantic", "buffer")
            and memory.kind != "archived"
            and memory.superseded_by is None
            and "extracted" not in memory.tags
        )
        if not candidate:
            return 0
        flags = CONFLICTING | (TRACE if memory.layer == "trace" else 0)
        flags |= (PARTAKES if traits.takes_part else 0) | (POSITIVE if traits.positive else 0)
        return flags | (NEGATIVE if traits.negative else 0)
