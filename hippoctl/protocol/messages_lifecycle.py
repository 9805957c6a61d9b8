"""Request bodies of the memory lifecycle, sleep, conflicts, sharing, the team verbs and the daily run
(memory-model.md §12-§15, sleep.md §1-§10); part of messages.RequestBody."""

from __future__ import annotations

from hippoctl.protocol.body import Body

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


class Refine(Body):
    """Ask the model for a clearer rewrite of memory `id`; the client supersedes with it (a second
    request, `Supersede`) once the user agrees."""

    id: str


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
    """A team server's memories written since a member's cursor, a page at a time.

    The server reads them in store/postgres/changes.py.
    """

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


# Every request body of this family, for messages.RequestBody.
BODIES = (
    Supersede
    | Refine
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
    | TeamJoin
    | TeamLeave
    | TeamStatus
    | TeamShare
    | TeamChanges
    | TeamMarks
    | Peers
    | Sync
    | Workspaces
    | DailyRunner
)
