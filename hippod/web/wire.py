"""The HTTP API's JSON shapes, one struct each, in the camelCase the original's SDK reads.

The same structs decode request bodies, encode replies and, through msgspec's JSON Schema, make the
OpenAPI document (openapi.py), so the document cannot drift from what the routes do.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec


def camel(name: str) -> str:
    """A snake_case name in camelCase, as msgspec's rename="camel" spells it."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class Wire(msgspec.Struct, rename="camel", omit_defaults=False):
    """Base of every request and reply body: camelCase on the wire, snake_case in Python."""


# --- requests --------------------------------------------------------------------------------------


class RememberIn(Wire):
    content: str
    kind: str | None = None  # distilled (the default) or raw
    scope: str | None = None
    owner: str | None = None
    artifact_ref: str | None = None
    tags: list[str] | None = None
    pinned: bool = False
    error: bool = False


# A memory's or key's id, in a body or a path (routing.Call.path_id).
ID_PATTERN = r"^[A-Za-z0-9_:.\-]{1,256}$"
Id = Annotated[str, msgspec.Meta(pattern=ID_PATTERN)]


class SupersedeIn(Wire):
    """The new version: `content` to store now, or `newId`, a memory already stored (the SDK's form)."""

    content: str | None = None
    new_id: Id | None = None


class ArchiveIn(Wire):
    reason: str | None = None


class OutcomeIn(Wire):
    good: bool
    ids: list[Id] | None = None


class TeamMarksIn(Wire):
    """A member's batch of marks on team memories (at most 1000 ids in all)."""

    retrieved: list[Id] = msgspec.field(default_factory=list)
    good: list[Id] = msgspec.field(default_factory=list)
    bad: list[Id] = msgspec.field(default_factory=list)


class SleepIn(Wire):
    dry_run: bool = False
    no_share: bool = False


class AuthCreateIn(Wire):
    tenant: str | None = None
    role: str | None = None
    label: str | None = None


class DecisionIn(Wire):
    text: str
    context: str | None = None
    supersedes_decision_id: int | None = None


class DecisionSupersedeIn(Wire):
    text: str
    context: str | None = None


# --- replies ---------------------------------------------------------------------------------------


class Error(msgspec.Struct):
    """Every failure: the message under `error` (what the SDK shows), and hippod's code for it."""

    error: str
    code: str
    hint: str | None = None


class Health(msgspec.Struct):
    """`GET /health`, in the original's own snake_case."""

    ok: bool
    version: str
    started_at: str
    pid: int


class Memory(Wire):
    id: str
    tenant_id: str
    content: str | None = None
    kind: str | None = None
    layer: str | None = None
    strength: float | None = None
    confidence: str | None = None
    tags: list[str] = []
    scope: str | None = None
    owner: str | None = None
    artifact_ref: str | None = None
    created: str | None = None
    last_retrieved: str | None = None
    retrieval_count: int | None = None
    half_life_days: float | None = None
    pinned: bool | None = None
    superseded_by: str | None = None
    outcome_positive: int | None = None
    outcome_negative: int | None = None


class Why(Wire):
    matched: list[str]
    base: float
    bm25: float
    cosine: float | None
    multipliers: dict[str, float]


class RecallEntry(Wire):
    id: str
    content: str
    score: float
    tokens: int
    layer: str
    tags: list[str]
    confidence: str
    strength: float
    is_global: bool
    pinned: bool
    created: str
    retrieval_count: int
    superseded_by: str | None = None
    why: Why | None = None
    # Cut to fit the budget: `content` is its start and a marker naming the memory and its full size.
    truncated: bool = False
    full_chars: int | None = None
    # Added by `hops`: how many entity-graph edges from a ranked result, and the last edge's kind.
    graph: GraphVia | None = None


class GraphVia(Wire):
    hops: int
    rel_type: str


class Suppression(Wire):
    total_candidates: int
    dropped_pre_rank: int
    dropped_by_budget: int
    summary_substitutions_added: int = 0
    fresh_tail_added: int = 0
    suppressed_by_interference: int = 0


class RecallResult(Wire):
    query: str
    mode: str
    results: list[RecallEntry]
    total: int
    tokens: int
    suppression_summary: Suppression


class ContextEntry(Wire):
    entry: Memory
    score: float
    tokens: int
    is_global: bool
    # Cut to fit the budget: `entry.content` is its start and a marker naming it and its full size.
    truncated: bool = False
    full_chars: int | None = None


class ContextResult(Wire):
    entries: list[ContextEntry]
    tokens: int
    active_snapshot: dict[str, Any] | None = None
    session_handoff: dict[str, Any] | None = None
    recent_events: list[dict[str, Any]] | None = None


class TeamMarksResult(Wire):
    retrieved: int
    good: int
    bad: int
    again: bool = False


class OutcomeResult(Wire):
    applied: int
    ids: list[str] | None = None


class ForgetResult(Wire):
    ok: bool
    id: str


class ArchiveResult(Wire):
    ok: bool
    id: str
    archived_at: str
    reason: str


class SupersedeResult(Wire):
    ok: bool
    id: str
    superseded_by: str
    old_id: str
    new_id: str


class PromoteResult(Wire):
    ok: bool
    source_id: str
    global_id: str


class DrillChild(Wire):
    id: str
    depth: int
    content: str | None


class DrillResult(Wire):
    parent: dict[str, Any]
    children: list[DrillChild]
    total_children: int
    truncated: bool


class AssembleItem(Wire):
    id: str
    content: str
    created_at: str
    strength: float
    is_fresh_tail: bool
    is_summary: bool


class AssembleResult(Wire):
    session_id: str
    items: list[AssembleItem]
    tokens: int
    total_raw: int
    summarized: int
    evicted: int
    truncated: bool


class SleepMerge(Wire):
    semantic_id: str
    members: list[str]
    text: str


class SleepResult(Wire):
    active: int
    removed: int
    merged_episodic: int
    new_semantic: int
    dry_run: bool
    deduped: dict[str, int]
    shared: int
    went_dormant: int
    open_conflicts: int
    details: list[str]
    merges: list[SleepMerge]


class AuthKey(Wire):
    key_id: str
    tenant_id: str
    role: str
    label: str | None
    created_at: str
    revoked_at: str | None = None


class AuthCreated(Wire):
    key_id: str
    plaintext: str
    tenant_id: str
    role: str
    label: str | None
    created_at: str


class AuthRevoked(Wire):
    ok: bool
    key_id: str
    revoked_at: str


class AuditEvent(Wire):
    id: int
    tenant_id: str
    actor: str
    op: str
    target_id: str | None
    metadata: dict[str, Any]
    created_at: str
    ts: str


class Decision(Wire):
    id: int
    memory_id: str | None
    tenant_id: str
    decision_text: str
    context: str | None
    status: str
    superseded_by: int | None
    superseded_at: str | None
    closed_at: str | None
    created_at: str


class DecisionReply(Wire):
    decision: Decision


class DecisionList(Wire):
    decisions: list[Decision]


class WebhookAck(Wire):
    """What a verified webhook delivery answers: always 200, so the sender does not retry forever."""

    ok: bool
    status: str
    memory_id: str | None = None
    archived_count: int | None = None


class Challenge(msgspec.Struct):
    challenge: str


class Pong(msgspec.Struct):
    pong: bool


class TeamChanges(Wire):
    """`GET /v1/team/changes`: one page of the tenant's memories written since a cursor (whole records,
    in snake_case as the store keeps them), the ids deleted since, and where to go on from."""

    memories: list[dict[str, Any]]
    deleted: list[str]
    next: str | None
    horizon: str


class GraphNode(Wire):
    id: int
    type: str
    name: str
    memories: int


class GraphEdge(Wire):
    from_: int = msgspec.field(name="from")
    to: int = 0
    rel_type: str = ""


class GraphModel(Wire):
    """`GET /v1/graph`: the entity graph as the original serves it."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: bool
