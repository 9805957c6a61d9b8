"""The HTTP shapes of the work-queue cards (`/v1/cards...`), camelCase like the rest of wire.py."""

from __future__ import annotations

from typing import Annotated

import msgspec

from hippoctl.protocol.validate import MAX_ID
from hippod.web.wire import Wire

_ID = Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)]
_TEXT = Annotated[str, msgspec.Meta(min_length=1, max_length=10_000)]
_RUN = Annotated[int, msgspec.Meta(ge=1, le=MAX_ID)] | None

# --- requests --------------------------------------------------------------------------------------


class CardIn(Wire):
    title: Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
    repo: str | None = None
    contract: str | None = None
    budget: Annotated[int, msgspec.Meta(ge=0, le=MAX_ID)] | None = None
    depends_on: list[_ID] = msgspec.field(default_factory=list)


class ClaimIn(Wire):
    runtime: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class RunIn(Wire):
    run: _RUN = None


class BlockIn(Wire):
    reason: _TEXT
    run: _RUN = None


class CompleteIn(Wire):
    outcome: str
    run: _RUN = None


class CommentIn(Wire):
    body: _TEXT


# --- replies ---------------------------------------------------------------------------------------


class Card(Wire):
    id: int
    title: str
    repo: str | None
    contract: str | None
    budget: int | None
    status: str
    tenant_id: str
    created_at: str
    updated_at: str


class CardRun(Wire):
    run: int
    runtime: str
    started_at: str
    lease_expires_at: str
    ended_at: str | None
    end_reason: str | None


class CardComment(Wire):
    ts: str
    author: str
    body: str


class CardHandoff(Wire):
    id: int
    session_id: str
    summary: str
    next_action: str | None
    created_at: str


class CardReply(Wire):
    card: Card
    run: CardRun | None = None
    readied: list[int] = msgspec.field(default_factory=list)


class CardDetail(Wire):
    card: Card
    depends_on: list[int]
    dependents: list[int]
    runs: list[CardRun]
    comments: list[CardComment]
    handoff: CardHandoff | None


class CardList(Wire):
    cards: list[Card]


class Reclaimed(Wire):
    card: int
    run: int


class ReclaimReply(Wire):
    reclaimed: list[Reclaimed]
