"""Typed reply data of the lifecycle verbs: sleep, conflicts, sharing, and the memory-model verbs
(supersede, reject, invalidate, decide, dormant, audit). See replies.py for the conventions."""

from __future__ import annotations

from typing import Any

import msgspec

from hippoctl.protocol.replies import Reply

# --- sleep (sleep.md §9) -------------------------------------------------------------------------------


class DedupeCounts(Reply):
    episodic: int = 0
    semantic: int = 0
    cross_layer: int = 0


class ConflictCounts(Reply):
    open: int = 0
    new: int = 0
    auto_resolved: int = 0


class SleepMerge(Reply):
    """One merge: the semantic memory it made, the memories it was made from, and the first one's
    first line (whitespace collapsed, cut to 120 characters)."""

    semantic_id: str
    members: list[str]
    text: str
    tenant: str = "default"


class SleepFaded(Reply):
    """A memory that faded below 0.05 and moved to the dormant store."""

    id: str
    text: str
    strength: float
    tenant: str = "default"


class SleepShared(Reply):
    """A memory auto-share copied to the global store (`global_id` None in a dry run)."""

    id: str
    global_id: str | None
    text: str
    tenant: str = "default"


class SleepConflict(Reply):
    """A conflict open after the sleep; `new` when this sleep found (or reopened) it."""

    a: str
    b: str
    a_text: str
    b_text: str
    reason: str
    new: bool
    tenant: str = "default"


class SleepReply(Reply):
    """The results of one sleep of one store, as `sleep --json` prints them.

    The owner's sleep covers the whole store, and so do its counts; `merges`, `went_dormant`,
    `open_conflicts` and `shared_memories` name the memories, and hold only those of the asking
    tenant. A key holder's sleep over HTTP covers that tenant alone, and so does all of its reply.
    """

    dry_run: bool = False
    active: int = 0
    removed: int = 0
    dormant_moved: int = 0
    secret_deleted: int = 0
    dormant_expired: int = 0
    merged: int = 0
    semantic_created: int = 0
    replayed: int = 0
    traces_promoted: int = 0
    # Facts phase 7 stored, from how many memories sent; why it stored nothing or stopped early.
    extracted: int = 0
    extraction_sent: int = 0
    extraction_note: str | None = None
    deduped: DedupeCounts = msgspec.field(default_factory=DedupeCounts)
    junk_removed: int = 0
    junk_warnings: int = 0
    conflicts: ConflictCounts = msgspec.field(default_factory=ConflictCounts)
    shared: int = 0
    # Memories queued for the team server (config autoShareToTeam, in a team).
    shared_team: int = 0
    learned: int = 0
    agent_notes: int = 0
    rejected: int = 0
    details: list[str] = msgspec.field(default_factory=list)
    merges: list[SleepMerge] = msgspec.field(default_factory=list)
    went_dormant: list[SleepFaded] = msgspec.field(default_factory=list)
    open_conflicts: list[SleepConflict] = msgspec.field(default_factory=list)
    # What `shared` counts: each memory and its copy in the global store.
    shared_memories: list[SleepShared] = msgspec.field(default_factory=list)


# --- supersede, reject, invalidate, decide, dormant, audit (memory-model.md §12-§15) ------------------


class SupersedeReply(Reply):
    old: str
    new: str
    store: str
    layer: str
    half_life_days: float


class RefineReply(Reply):
    """The model's rewrite of one memory, not stored: `old` and `new` texts, the model, its tokens."""

    id: str
    old: str
    new: str
    model: str
    unchanged: bool = False
    input_tokens: int = 0
    output_tokens: int = 0


class RejectReply(Reply):
    digest: str
    removed: list[str]  # live and dormant copies deleted
    archived: list[str]  # raw copies archived instead
    # Copies in the global store, left there but hidden from this project's reads
    global_copies: int = 0
    # This project's own copies in the global store (what share, promote or auto-share made), removed
    global_removed: list[str] = msgspec.field(default_factory=list)
    # Why the global store could not be looked at for copies (the rejection itself is done).
    global_problem: str | None = None


class RejectionItem(Reply):
    digest: str
    reason: str
    rejected_by: str
    rejected_at: str
    source_memory_id: str | None
    normalized_chars: int


class RejectionsReply(Reply):
    store: str
    rejections: list[RejectionItem]


class UnrejectReply(Reply):
    digest: str


class InvalidateReply(Reply):
    pattern: str | None
    dry_run: bool
    invalidated: list[str]
    skipped_pinned: list[str]


class DecisionItem(Reply):
    n: int
    text: str
    context: str | None
    status: str
    memory_id: str | None
    superseded_by: int | None
    created_at: str
    closed_at: str | None
    superseded_at: str | None = None
    tenant: str = "default"


class DecideReply(Reply):
    decision: DecisionItem
    superseded_memory: str | None = None
    superseded_decision: int | None = None


class DecisionsReply(Reply):
    decisions: list[DecisionItem]


class DormantItem(Reply):
    id: str
    content: str
    tags: list[str]
    layer: str
    dormant_at: str
    reason: str


class DormantReply(Reply):
    total: int
    results: list[DormantItem]


class DormantMoveReply(Reply):
    id: str
    restored: bool = False
    forgotten: bool = False


class AuditItem(Reply):
    id: int
    ts: str
    tenant: str
    actor: str
    op: str
    target: str | None
    metadata: dict[str, Any]


class AuditReply(Reply):
    entries: list[AuditItem]


class AuditPruneReply(Reply):
    deleted: int
    before: str


# --- conflicts and sharing (sleep.md §7-§8) ------------------------------------------------------------


class ConflictSide(Reply):
    id: str
    content: str | None  # first 120 chars; None when the memory is gone


class ConflictItem(Reply):
    id: int
    status: str
    reason: str
    score: float
    resolved_by: str | None
    detected_at: str
    updated_at: str
    a: ConflictSide
    b: ConflictSide


class ConflictsReply(Reply):
    status: str
    conflicts: list[ConflictItem]


class ResolveReply(Reply):
    conflict: ConflictItem
    kept: str | None = None
    loser: str | None = None
    action: str | None = None  # weakened, forgotten or rejected; None when only shown


class SharedItem(Reply):
    id: str
    global_id: str | None  # the copy, or the memory already there
    score: float | None
    already: bool = False


class ShareReply(Reply):
    dry_run: bool
    items: list[SharedItem]


class Peer(Reply):
    project: str
    memories: int
    last: str


class PeersReply(Reply):
    peers: list[Peer]


class SyncReply(Reply):
    copied: list[str]
    present: int
    rejected: int
    other_projects: int
