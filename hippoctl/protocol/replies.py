"""Typed reply data, one struct per verb: what `Result.data` carries and what `--json` prints.

The daemon builds these; the client never needs to import them (it prints `text`, or
re-encodes `data` as JSON), so this module stays off the client's start-up path.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Reply(msgspec.Struct, omit_defaults=False):
    """Base of every reply data struct."""


class PingReply(Reply):
    version: str
    protocol: int
    min_protocol: int
    pid: int


class StoreInfo(Reply):
    path: str
    kind: str
    idle_s: int
    schema: int


class DaemonStatusReply(Reply):
    version: str
    protocol: int
    pid: int
    started_at: str
    uptime_s: int
    home: str
    socket: str
    socket_activated: bool
    stores: list[StoreInfo]
    connections: int
    log: str
    schedule: ScheduleStatus | None = None
    watch: WatchStatus | None = None
    spool: dict[str, int] | None = None  # {"pending": N, "failed": M}
    http: str | None = None  # the HTTP API's URL while its listener is open
    dashboard: str | None = None  # the dashboard's URL while its listener is open


class McpSettings(Reply):
    """An MCP client's server entry for `hippoctl mcp`, as its settings file spells it."""

    command: str
    args: list[str]


class InitReply(Reply):
    """`init`: the store (the first one with --scan), and every action taken, one line each."""

    path: str
    created: bool
    kind: str
    stores: list[str] = msgspec.field(default_factory=list)  # with --scan: every repository's store
    learned: int = 0  # git lessons stored
    imported: int = 0  # agent notes stored
    targets: list[str] = msgspec.field(default_factory=list)  # agents detected and wired
    registered: bool = False  # in workspaces.json for the daily run
    service: str | None = None  # the per-user service, when installed now or before
    mcp: McpSettings | None = None  # how an MCP client starts this client's `mcp`, from any shell
    lines: list[str] = msgspec.field(default_factory=list)


class RememberReply(Reply):
    id: str
    store: str
    layer: str
    strength: float
    half_life_days: float
    confidence: str
    tags: list[str]
    created: str = ""


class Why(Reply):
    bm25: float
    bm25_norm: float
    matched: list[str]
    cosine: float | None
    base: float
    multipliers: dict[str, float]
    envelope: dict[str, str | None]
    # Embeddings are on but the memory has no current vector yet: it ranked by its words alone.
    words_only: bool = False


class GraphStep(Reply):
    """How `recall --hops` reached a result: `hops` edges from a selected one (`origin`, the memory
    it came from), the last edge's kind, and the entity or memory it went through."""

    hops: int
    edge: str
    via: str
    origin: str


class RecallItem(Reply):
    id: str
    source: str
    layer: str
    confidence: str
    aged: bool
    pinned: bool
    score: float
    strength: float
    tokens: int
    tags: list[str]
    content: str
    created: str
    last_retrieved: str
    retrieval_count: int
    half_life_days: float
    superseded_by: str | None = None
    why: Why | None = None
    # Cut to fit the budget: `content` is its start and a marker; `full_chars` is its whole length.
    truncated: bool = False
    full_chars: int | None = None
    graph: GraphStep | None = None


class Skipped(Reply):
    budget: int
    limit: int


class RecallReply(Reply):
    query: str
    budget: int
    tokens: int
    candidates: int
    skipped: Skipped
    results: list[RecallItem]
    mode: str = "bm25"  # hybrid when some result was scored with the embedding model


class StrengthMath(Reply):
    strength: float
    days_since_retrieved: float
    reward_factor: float
    effective_half_life: float
    decay: float
    boost: float
    emotion: float
    penalty: float
    aged: bool


class InspectReply(Reply):
    store: str
    memory: dict[str, Any]
    math: StrengthMath
    supersedes: list[str]
    conflicts: list[str]


class ForgetReply(Reply):
    id: str
    archived: bool
    # The memory's copies in the global store (a project memory shared there): removed with it, or
    # kept (a copy shared or promoted by hand, without --global-too).
    global_removed: list[str] = msgspec.field(default_factory=list)
    global_kept: list[str] = msgspec.field(default_factory=list)
    # Why the global store could not be looked at for copies (the forget itself is done).
    global_problem: str | None = None


class OutcomeReply(Reply):
    positive: bool
    applied: int
    ids: list[str]
    pinned: list[str]


class MirrorStatus(Reply):
    """A store's markdown mirrors: how many the database calls for are missing now, and what
    healing wrote and removed since the daemon opened the store (healed_at: its last run)."""

    missing: int
    healed: int
    removed: int
    healed_at: str | None = None


class StoreStatus(Reply):
    path: str
    kind: str
    tenant: str
    total: int
    layers: dict[str, int]
    pinned: int
    superseded: int
    at_risk: int
    mean_strength: float
    schema: int
    sleep_count: int
    last_sleep: str | None
    total_remembered: int
    total_recalled: int
    total_forgotten: int
    # How many memories have a vector of the store's model, or why embeddings are off (`off: <why>`).
    embeddings: str | None = None
    dormant: int = 0
    open_conflicts: int = 0
    mirrors: MirrorStatus | None = None


class StatusReply(Reply):
    stores: list[StoreStatus]


class EmbedStore(Reply):
    """One store's vectors after an `embed` request."""

    path: str
    kind: str
    model: str
    dim: int | None
    embedded: int  # memories with a current vector
    total: int
    added: int = 0  # vectors made by this request
    unavailable: str | None = None  # why the model could not be used
    seconds_left: float | None = None  # for the missing vectors, at the model's speed so far
    per_second: float | None = None  # that speed, memories a second


class EmbedReply(Reply):
    stores: list[EmbedStore]


# --- daily run and workspace registry (sleep.md §10, daemon.md §12, §16) -------------------------------


class DailyRunResult(Reply):
    """One daily run, as daemon-state.json records it (`last_daily_result`) and `daemon status` shows it."""

    started_at: str
    finished_at: str | None = None
    trigger: str = "manual"  # schedule, catch-up, resume or manual
    workspaces: int = 0  # workspaces processed
    skipped: int = 0  # registered paths that are missing or hold no store
    failures: int = 0  # failed steps
    ok: bool = True
    summary: str = ""


class DailyRunnerReply(Reply):
    joined: bool  # the request joined a run that was already going
    run: DailyRunResult


class ScheduleStatus(Reply):
    """The `schedule` part of `daemon status`."""

    daily_enabled: bool
    daily_time: str | None = None  # local HH:MM[:SS]
    daily_next: str | None = None  # ISO instant of the next scheduled run
    catch_up_at: str | None = None  # a pending catch-up run after downtime
    reclaim_next: str | None = None
    running: bool = False
    last_daily: DailyRunResult | None = None


class WorkspaceEntry(Reply):
    path: str
    exists: bool
    has_store: bool


class WorkspacesReply(Reply):
    action: str
    path: str | None
    changed: bool
    workspaces: list[WorkspaceEntry]


class WatchStatus(Reply):
    """The `watch` part of `daemon status` (daemon.md §16): roots watched, and roots not there yet."""

    roots: list[str]
    missing: list[str]


class GraphNodeItem(Reply):
    id: int
    type: str  # entity, artifact, file, symbol, decision or policy
    name: str
    memories: int  # how many live memories name it


class GraphEdgeItem(Reply):
    source: int
    target: int
    rel: str  # references or mentioned-with


class GraphReply(Reply):
    nodes: list[GraphNodeItem]
    edges: list[GraphEdgeItem]
    truncated: bool  # a list reached the limit: the graph may hold more
