"""Request bodies of the work-queue card verbs (integrations.md §14); part of messages.RequestBody."""

from __future__ import annotations

from hippoctl.protocol.body import Body

# A card's states in board order (a card moves left to right), and `complete`'s outcomes.
STATES = ("waiting", "ready", "running", "blocked", "review", "done", "shelved")
OUTCOMES = ("success", "failure", "partial")


class CardCreate(Body):
    title: str
    repo: str | None = None
    contract: str | None = None
    budget: int | None = None
    depends_on: list[int] = []


class CardShow(Body):
    id: int


class CardList(Body):
    status: str | None = None  # one of the card states; None for all
    limit: int | None = None


class CardClaim(Body):
    id: int
    runtime: str


class CardHeartbeat(Body):
    id: int
    run: int | None = None  # the run the caller holds; None: the live run


class CardBlock(Body):
    id: int
    reason: str
    run: int | None = None


class CardReview(Body):
    id: int
    run: int | None = None


class CardComplete(Body):
    id: int
    outcome: str  # success, failure or partial
    run: int | None = None


class CardReclaim(Body):
    """Every running card of the store whose lease has passed goes back to ready."""


class CardComment(Body):
    id: int
    body: str
    author: str | None = None  # None: the request's actor


class CardDepend(Body):
    """Add dependencies to an existing card; a cycle is refused."""

    id: int
    on: list[int]


CARD_BODIES = (
    CardCreate,
    CardShow,
    CardList,
    CardClaim,
    CardHeartbeat,
    CardBlock,
    CardReview,
    CardComplete,
    CardReclaim,
    CardComment,
    CardDepend,
)
