"""Typed reply data of the work-queue card verbs (integrations.md §14). See replies.py for the conventions."""

from __future__ import annotations

from hippoctl.protocol.replies import Reply
from hippoctl.protocol.replies_continuity import HandoffItem


class CardItem(Reply):
    id: int
    title: str
    repo: str | None
    contract: str | None
    budget: int | None
    status: str
    created_at: str
    updated_at: str
    tenant: str = "default"


class CardRunItem(Reply):
    run: int
    runtime: str
    started_at: str
    lease_expires_at: str
    ended_at: str | None = None
    end_reason: str | None = None  # blocked, review, expired


class CardCommentItem(Reply):
    ts: str
    author: str
    body: str


class CardReply(Reply):
    """`card create|claim|heartbeat|block|review|complete|comment|depend`: the card after the verb."""

    card: CardItem
    run: CardRunItem | None = None  # the live run, when the card has one
    readied: list[int] = []  # waiting cards a `complete` made ready


class CardDetailReply(Reply):
    """`card show`: the card, its dependencies, runs (newest first), comments and latest handoff."""

    card: CardItem
    depends_on: list[int]
    dependents: list[int]
    runs: list[CardRunItem]
    comments: list[CardCommentItem]
    handoff: HandoffItem | None = None


class CardsReply(Reply):
    """`card list`: newest-updated first."""

    cards: list[CardItem]


class ReclaimedRun(Reply):
    card: int
    run: int


class CardReclaimReply(Reply):
    reclaimed: list[ReclaimedRun]
