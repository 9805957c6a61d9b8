"""The messages on the wire: msgspec Structs tagged by class name in the field "t".

Client -> daemon: Hello, Request, Cancel. Daemon -> client: Welcome, Progress, Result, Error.
Every verb has its own closed request body type; the daemon dispatches on it in one place.
Decoders ignore unknown fields, so new optional fields never need a protocol bump.
"""

from __future__ import annotations

from typing import Any

import msgspec

from hippoctl.protocol import messages_cards as cards
from hippoctl.protocol.body import Body as Body  # re-exported: every verb's body derives from m.Body


class Message(msgspec.Struct, tag=True, tag_field="t", omit_defaults=True):
    """Base of every top-level frame."""


class Hello(Message):
    protocol: int
    client_version: str
    pid: int
    home: str
    features: list[str] = []


class Welcome(Message):
    protocol: int
    daemon_version: str
    pid: int
    started_at: str
    home: str


class Cancel(Message):
    id: int


class Progress(Message):
    id: int
    line: str
    stream: str = "out"
    # A counted step (`line` is its label): the client draws a bar on a terminal, nothing on a pipe.
    done: int | None = None
    total: int | None = None


class Result(Message):
    id: int
    exit_code: int = 0
    text: str = ""
    data: Any = None
    warnings: list[str] = []


class Error(Message):
    id: int | None
    code: str
    message: str
    hint: str | None = None
    details: dict[str, Any] = {}
    exit_code: int = 1


# --- request bodies: one per verb ---------------------------------------------------------------


class Ping(Body):
    """`version` and readiness probes."""

    on_team = True


class DaemonStatus(Body):
    on_team = True


class Shutdown(Body):
    on_team = True


class Init(Body):
    """`init`: a store here (or the global one), seeded and wired to the agents found (integrations.md §1)."""

    command: str = "hippoctl"  # how installed hooks call this client (hippoctl/selfcommand.py)
    scan: str | None = None  # absolute folder: a store for every git repository below it
    days: int | None = None
    no_hooks: bool = False
    no_schedule: bool = False
    no_learn: bool = False


class Remember(Body):
    on_team = True

    content: str
    tags: list[str] = []
    error: bool = False
    pin: bool = False
    confidence: str | None = None
    scope: str | None = None
    owner: str | None = None
    artifact_ref: str | None = None
    kind: str = "distilled"  # or "raw": an append-only receipt (the HTTP API and the webhooks)
    # Makes a retry safe: one key stores one memory per tenant, however often it is sent (the HTTP
    # API's Idempotency-Key header; a laptop's queue of writes for its team).
    request_key: str | None = None


class Recall(Body):
    on_team = True

    query: str
    budget: int | None = None
    limit: int | None = None
    min_results: int = 1
    why: bool = False
    local_bump: float | None = None
    equal_sources: bool = False
    include_superseded: bool = False
    scope: str | None = None
    # The HTTP API's `mode`: None follows the store's embeddings setting, "bm25" leaves the model
    # out, "hybrid" needs it.
    mode: str | None = None
    # False: rank and record the batch for `outcome`, but leave strength and retrieval counts alone.
    strengthen: bool = True


class Inspect(Body):
    on_team = True

    id: str


class Forget(Body):
    on_team = True

    id: str
    archive: bool = False
    reason: str | None = None


class Outcome(Body):
    on_team = True

    good: bool
    id: str | None = None
    ids: list[str] | None = None  # several at once (the HTTP API); each must exist, or none is marked


class Status(Body):
    on_team = True


class Embed(Body):
    """`embed [--status]`: embed what lacks a current vector, or only report coverage."""

    status_only: bool = False


# --- the memory lifecycle (memory-model.md §12-§15) ------------------------------------------------


class Supersede(Body):
    """The new version is `content`, stored now, or `new_id`, a memory already stored."""

    on_team = True

    id: str
    content: str = ""
    new_id: str | None = None
    tags: list[str] | None = None  # None: copy the old memory's tags
    pin: bool | None = None
    layer: str | None = None


class Reject(Body):
    """By id, or by value (exactly one of the two)."""

    on_team = True

    reason: str
    id: str | None = None
    value: str | None = None


class Rejections(Body):
    on_team = True


class Unreject(Body):
    on_team = True

    prefix: str


class Invalidate(Body):
    pattern: str | None = None
    id: str | None = None
    reason: str | None = None
    dry_run: bool = False


class Decide(Body):
    text: str
    context: str | None = None
    supersedes: str | None = None  # a memory id
    supersedes_decision: int | None = None  # an active decision's number


class DecideList(Body):
    status: str | None = None  # active, superseded, closed; None for all


class DecideGet(Body):
    n: int


class DecideClose(Body):
    n: int


class Dormant(Body):
    on_team = True

    query: str | None = None
    limit: int = 20


class DormantRestore(Body):
    on_team = True

    id: str


class DormantForget(Body):
    on_team = True

    id: str


class AuditList(Body):
    on_team = True

    op: str | None = None
    since: str | None = None
    limit: int = 100


class AuditPrune(Body):
    on_team = True

    days: int


# --- sleep, conflicts and sharing (sleep.md §1-§9) --------------------------------------------------


class Sleep(Body):
    on_team = True

    dry_run: bool = False
    no_learn: bool = False
    no_share: bool = False
    verbose: bool = False  # the full report and phase progress instead of the short summary


class Conflicts(Body):
    on_team = True

    status: str = "open"  # open, resolved or all


class Resolve(Body):
    on_team = True

    n: int
    keep: str | None = None
    forget: bool = False
    reject_loser: bool = False
    reason: str | None = None


class Promote(Body):
    id: str


class Share(Body):
    """`share <id> [--force]`, or `share --auto [--min-score S] [--dry-run]`."""

    id: str | None = None
    force: bool = False
    auto: bool = False
    min_score: float = 0.6
    dry_run: bool = False


class TeamJoin(Body):
    """`team join <url> --key <k>`: share with a team server from now on."""

    url: str
    key: str


class TeamLeave(Body):
    """`team leave`: stop; the writes still queued for the team are dropped."""


class TeamStatus(Body):
    """`team status`: the team server, whether it answers, and the queue of writes for it."""


class TeamShare(Body):
    """`share --team <id>...`: queue copies of these memories for the team server, in this order."""

    ids: list[str]


class TeamChanges(Body):
    """A team server's memories written since a member's cursor, a page at a time (team/changes.py)."""

    on_team = True

    after: str | None = None
    limit: int = 500


class TeamMarks(Body):
    """A member's batch of retrievals and outcome marks of team memories (`POST /v1/team/marks`)."""

    on_team = True

    retrieved: list[str] = []
    good: list[str] = []
    bad: list[str] = []
    # The batch's Idempotency-Key: a batch sent again with the same key is applied once.
    batch_key: str | None = None


class Peers(Body):
    pass


class Sync(Body):
    cross_project: bool = False


# --- the daily run (sleep.md §10) --------------------------------------------------------------------


class Workspaces(Body):
    action: str = "list"  # list, add or remove
    path: str | None = None


class DailyRunner(Body):
    on_team = True


# --- ingestion (ingest.md) ----------------------------------------------------------------------


IMPORT_FORMATS = ("chatgpt", "claude", "cursor", "markdown", "file", "json")


class Import(Body):
    """`import --<format> <path>`, or `import --agents` (format "agents", no path)."""

    format: str
    path: str | None = None  # absolute: the client resolves it against its cwd
    dry_run: bool = False
    tags: list[str] = []
    force: bool = False  # read the file even when it is unchanged since its last import


class Export(Body):
    on_team = True

    path: str | None = None  # absolute; None sends the document back for stdout
    format: str = "json"  # json or markdown


class Capture(Body):
    source: str  # stdin, file or last-session
    text: str | None = None  # the stdin text, read by the client
    path: str | None = None  # --file, absolute
    transcript: str | None = None  # --transcript, absolute
    dry_run: bool = False


class LearnGit(Body):
    days: int = 7
    repos: list[str] = []  # absolute paths; empty means the cwd's repository


class WatchFailure(Body):
    """Sent by `watch` only when the command failed."""

    command: str
    exit_code: int
    output: str  # the command's stderr: its first and last 16 KiB when longer
    stdout: str = ""  # the command's stdout: its first and last 16 KiB when longer


class CaptureError(Body):
    """The PostToolUseFailure hook: the host's JSON as parsed, or the raw text when it is not JSON."""

    payload: Any = None
    # The name (without .json) of the spool file this request is or would be written as; the
    # daemon applies each key once, whether it arrives live, from the spool, or both.
    spool_key: str | None = None


class Failures(Body):
    days: int = 30


# --- context for agents (recall.md §9) --------------------------------------------------------


class Context(Body):
    """`context`; with `pinned_only` it is the per-prompt hook's block (recall.md §9, pinned injection)."""

    on_team = True

    query: str | None = None
    auto: bool = False
    budget: int | None = None  # None: defaultContextBudget, or pinnedInject.budget when pinned_only
    limit: int | None = None
    framing: str = "observe"  # observe, suggest or assert
    format: str = "markdown"  # markdown, json or additional-context
    pinned_only: bool = False
    include_recent: int = 0
    scope: str | None = None
    cross_project: bool = False
    payload: Any = None  # the host's hook JSON (session_id, prompt, cwd) when run as a hook

    def team_refusal(self) -> str | None:
        # The per-prompt hook's pinned block reads a laptop's per-session state.
        return "context --pinned-only" if self.pinned_only else None


# --- continuity (continuity.md §1-§5) -----------------------------------------------------------


class SnapshotSave(Body):
    task: str
    summary: str
    next_step: str | None = None
    source: str = "cli"
    session: str | None = None  # None: HIPPO_SESSION_ID, else no session


class SnapshotShow(Body):
    pass


class SnapshotClear(Body):
    status: str = "cleared"


class SessionLog(Body):
    session_id: str
    content: str
    type: str = "note"
    task: str | None = None
    source: str = "cli"


class SessionShow(Body):
    """Events of one session (`--id`) or one task (`--task`); neither: HIPPO_SESSION_ID, else the
    session of the newest event."""

    session_id: str | None = None
    task: str | None = None
    limit: int = 8


class SessionLatest(Body):
    pass


class SessionResume(Body):
    pass


class HandoffCreate(Body):
    summary: str
    session_id: str  # the client fills HIPPO_SESSION_ID, else fallback-<epoch ms>-<client pid>
    next: str | None = None
    task: str | None = None
    artifacts: list[str] = []


class HandoffLatest(Body):
    pass


class HandoffShow(Body):
    id: int


class CurrentShow(Body):
    pass


class WmPush(Body):
    content: str
    scope: str = "default"
    importance: float = 0.5
    session: str | None = None  # None: HIPPO_SESSION_ID, else no session


class WmRead(Body):
    scope: str = "default"


class WmClear(Body):
    scope: str = "default"
    session: str | None = None  # None: every entry of the scope


class WmFlush(Body):
    scope: str = "default"
    session: str | None = None


# --- compaction and session hooks (ingest.md §8, continuity.md §4, integrations.md) ---------------


class PreCompact(Body):
    """The PreCompact hook: the host's JSON (session_id, transcript_path, cwd, trigger)."""

    payload: Any = None
    spool_key: str | None = None  # as on CaptureError: the request is applied once


class PostCompact(Body):
    """The PostCompact hook: the host's JSON (session_id, transcript_path, cwd, compact_summary)."""

    payload: Any = None
    spool_key: str | None = None


class CompactResume(Body):
    """SessionStart after a compaction: prints the snapshot back when it is fresh. Never spooled."""

    payload: Any = None


class SessionEnd(Body):
    """SessionEnd: queues sleep, transcript capture and re-read accounting, and returns at once."""

    payload: Any = None
    spool_key: str | None = None
    codex_offset: int | None = None  # byte offset of Codex's history.jsonl when the session began
    once: bool = False  # a session id that already ended in this store is not run again


class LastSleep(Body):
    """SessionStart: prints the consolidation kept by the previous session end; clears it unless keep."""

    keep: bool = False
    payload: Any = None
    verbose: bool = False  # the full report instead of the short summary


class Tokens(Body):
    """`tokens`: the token ledger's totals per surface (continuity.md §7)."""

    days: int = 30
    here: bool = False  # only the current project's rows


class Setup(Body):
    """`setup`: the machine-level half of init (integrations.md §2)."""

    command: str = "hippoctl"
    all: bool = False
    dry_run: bool = False
    no_schedule: bool = False


HOOK_TARGETS = ("claude-code", "codex", "cursor", "openclaw", "opencode", "pi")


class HookList(Body):
    """`hook list`: per target, whether it is detected, its files and their state (integrations.md §8)."""

    command: str = "hippoctl"


class HookInstall(Body):
    target: str
    command: str = "hippoctl"


class HookUninstall(Body):
    target: str


class ServiceInstall(Body):
    """`daemon install-service`: the per-user unit, agent or task (daemon.md §14)."""

    socket_activation: bool = False


class ServiceUninstall(Body):
    pass


class Doctor(Body):
    """`doctor`: the daemon's half of the read-only install check (integrations.md §12)."""

    on_team = True

    command: str = "hippoctl"


class SupportBundle(Body):
    """`support-bundle`: the daemon's redacted facts for a support ticket; the client writes the file."""

    on_team = True

    include_logs: bool = False


class Serve(Body):
    """`serve`: open the HTTP listener inside the daemon, or close it (integrations.md §9)."""

    on_team = True

    port: int | None = None  # None: HIPPO_PORT of the daemon, else daemon.json http.port
    host: str | None = None  # None: daemon.json http.host
    allow_remote: bool = False
    stop: bool = False


class DashboardStart(Body):
    """`dashboard`: open the read-only dashboard's loopback listener, or name the one already open
    (integrations.md §13)."""

    port: int | None = None  # None: daemon.json dashboard.port, else 3333; 0: any free port


class DashboardStop(Body):
    """`dashboard --stop`: close the dashboard's listener."""


class AuthCreate(Body):
    """`auth create`: a new API key; its plaintext is in the reply, once."""

    on_team = True

    tenant: str | None = None  # None: the request's tenant
    role: str = "admin"
    label: str | None = None


class AuthList(Body):
    """`auth list`: the keys of the request's tenant, newest first, never their secrets."""

    on_team = True

    active_only: bool = True
    limit: int | None = None
    after: int | None = None  # the paging cursor: keys older than this row number
    tenant: str | None = None  # None: the request's tenant


class AuthRevoke(Body):
    on_team = True

    key_id: str
    tenant: str | None = None  # None: the request's tenant


class AuthToken(Body):
    """`auth token`: the local token, which proves this user to the HTTP API and the dashboard."""


class SlackBackfill(Body):
    """`slack backfill`: page a channel's history into raw memories (integrations.md §10)."""

    channel: str
    since: str | None = None  # ISO time: nothing older
    token: str | None = None  # SLACK_BOT_TOKEN from the client's environment, else the daemon's


class DeadLetters(Body):
    """`slack dlq list` / `github dlq list`: webhook deliveries that could not be ingested."""

    source: str  # slack or github
    limit: int = 100


class McpToolCall(Body):
    """One MCP tool call from `hippoctl mcp` (integrations.md §11)."""

    on_team = True

    tool: str
    arguments: dict[str, Any] = {}
    session_key: str | None = None  # the last-batch key, `mcp:<pid>`


RequestBody = (
    Ping
    | DaemonStatus
    | Shutdown
    | Init
    | Remember
    | Recall
    | Inspect
    | Forget
    | Outcome
    | Status
    | Embed
    | Supersede
    | Reject
    | Rejections
    | Unreject
    | Invalidate
    | Decide
    | DecideList
    | DecideGet
    | DecideClose
    | Dormant
    | DormantRestore
    | DormantForget
    | AuditList
    | AuditPrune
    | Sleep
    | Conflicts
    | Resolve
    | Promote
    | Share
    | Peers
    | TeamJoin
    | TeamLeave
    | TeamStatus
    | TeamShare
    | TeamChanges
    | TeamMarks
    | Sync
    | Workspaces
    | DailyRunner
    | Import
    | Export
    | Capture
    | LearnGit
    | WatchFailure
    | CaptureError
    | Failures
    | Context
    | SnapshotSave
    | SnapshotShow
    | SnapshotClear
    | SessionLog
    | SessionShow
    | SessionLatest
    | SessionResume
    | HandoffCreate
    | HandoffLatest
    | HandoffShow
    | CurrentShow
    | WmPush
    | WmRead
    | WmClear
    | WmFlush
    | PreCompact
    | PostCompact
    | CompactResume
    | SessionEnd
    | LastSleep
    | Tokens
    | Setup
    | HookList
    | HookInstall
    | HookUninstall
    | ServiceInstall
    | ServiceUninstall
    | Doctor
    | SupportBundle
    | Serve
    | DashboardStart
    | DashboardStop
    | AuthCreate
    | AuthList
    | AuthRevoke
    | AuthToken
    | SlackBackfill
    | DeadLetters
    | McpToolCall
    | cards.CardCreate
    | cards.CardShow
    | cards.CardList
    | cards.CardClaim
    | cards.CardHeartbeat
    | cards.CardBlock
    | cards.CardReview
    | cards.CardComplete
    | cards.CardReclaim
    | cards.CardComment
    | cards.CardDepend
)


class Request(Message):
    id: int
    cwd: str
    body: RequestBody
    env: dict[str, str] = {}
    tenant: str | None = None
    session: str | None = None
    global_store: bool = False
    deadline_ms: int | None = None


ClientMessage = Hello | Request | Cancel
DaemonMessage = Welcome | Progress | Result | Error

BODY_TAGS = frozenset(t.__name__ for t in RequestBody.__args__)

# Variables the client copies from its environment into every request (memory-model.md §5).
REQUEST_ENV = (
    "HIPPO_TENANT",
    "HIPPO_SCOPE",
    "GSTACK_SKILL",
    "OPENCLAW_SKILL",
    "HIPPO_SESSION_ID",
    "HIPPO_AGENT_MEMORY_TOOLS",
    "HIPPO_SKIP_AUTO_INTEGRATIONS",
)
