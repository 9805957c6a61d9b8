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
from hippoctl.protocol import messages_daemon as daemon
from hippoctl.protocol import messages_goals as goals
from hippoctl.protocol import messages_ingest as ingest
from hippoctl.protocol import messages_integrations as integrations
from hippoctl.protocol import messages_lifecycle as lifecycle
from hippoctl.protocol import messages_memory as memory
from hippoctl.protocol.body import Body as Body  # re-exported: every verb's body derives from m.Body
from hippoctl.protocol.messages_backup import *  # noqa: F403  (m.<Body> names every verb)
from hippoctl.protocol.messages_continuity import *  # noqa: F403  (m.<Body> names every verb)
from hippoctl.protocol.messages_daemon import *  # noqa: F403  (m.<Body> names every verb)
from hippoctl.protocol.messages_goals import *  # noqa: F403  (m.<Body> names every verb)
from hippoctl.protocol.messages_ingest import *  # noqa: F403  (m.<Body> names every verb)
from hippoctl.protocol.messages_integrations import *  # noqa: F403  (m.<Body> names every verb)
from hippoctl.protocol.messages_lifecycle import *  # noqa: F403  (m.<Body> names every verb)
from hippoctl.protocol.messages_memory import *  # noqa: F403  (m.<Body> names every verb)


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


RequestBody = (
    daemon.BODIES
    | memory.BODIES
    | lifecycle.BODIES
    | ingest.BODIES
    | continuity.BODIES
    | goals.BODIES
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
