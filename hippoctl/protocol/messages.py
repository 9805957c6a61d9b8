"""The messages on the wire: msgspec Structs tagged by class name in the field "t".

Client -> daemon: Hello, Request, Cancel. Daemon -> client: Welcome, Progress, Result, Error.
Every verb has its own closed request body type; the daemon dispatches on it in one place.
Decoders ignore unknown fields, so new optional fields never need a protocol bump.
"""

from __future__ import annotations

from typing import Any

import msgspec

from hippoctl.protocol import messages_backup as backup
from hippoctl.protocol import messages_cards as cards
from hippoctl.protocol import messages_continuity as continuity
from hippoctl.protocol import messages_ingest as ingest
from hippoctl.protocol import messages_integrations as integrations
from hippoctl.protocol import messages_lifecycle as lifecycle
from hippoctl.protocol.body import Body as Body  # re-exported: every verb's body derives from m.Body
from hippoctl.protocol.messages_backup import *  # noqa: F403  (m.<Body> names every verb)
from hippoctl.protocol.messages_continuity import *  # noqa: F403  (m.<Body> names every verb)
from hippoctl.protocol.messages_ingest import *  # noqa: F403  (m.<Body> names every verb)
from hippoctl.protocol.messages_integrations import *  # noqa: F403  (m.<Body> names every verb)
from hippoctl.protocol.messages_lifecycle import *  # noqa: F403  (m.<Body> names every verb)


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
    # Also remove the global copy a share or promote by hand made (auto-share's copy always goes).
    global_too: bool = False


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


# --- the daily run (sleep.md §10) --------------------------------------------------------------------


class Workspaces(Body):
    action: str = "list"  # list, add or remove
    path: str | None = None


class DailyRunner(Body):
    on_team = True


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
    | lifecycle.BODIES
    | Workspaces
    | DailyRunner
    | ingest.BODIES
    | continuity.BODIES
    | integrations.BODIES
    | backup.BODIES
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
