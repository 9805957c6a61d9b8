"""The MCP tools of `hippoctl mcp` (integrations.md §11, and §14's cards) as typed signatures.

Each function is never called: its parameters (types, defaults, descriptions) become the tool's
input schema, and its docstring the tool's description. The daemon checks the same arguments again
(hippod/mcp/args.py). A budget left out follows the store's configured default, which is the value
shown here unless the user changed it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import Field

from hippoctl.protocol.mcp_names import TOOL_NAMES
from hippoctl.protocol.validate import MAX_ID

Budget = Annotated[int, Field(ge=0, description="Token budget for the reply (tokens = characters / 4).")]
Scope = Annotated[
    str | None, Field(description="Also admit memories of this scope (e.g. a skill name); default: none.")
]


def hippo_recall(
    query: Annotated[str, Field(description="What to look for, in plain words.")],
    budget: Budget = 4000,
    limit: Annotated[int | None, Field(ge=0, description="At most this many memories.")] = None,
    scope: Scope = None,
    include_continuity: Annotated[
        bool, Field(description="Put the active task, latest handoff and recent events first.")
    ] = False,
    session_id: Annotated[
        str | None,
        Field(description="With include_continuity: the session whose handoff and events to show."),
    ] = None,
) -> None:
    """Search project and global memory for lessons, decisions and past errors relevant to a query.
    Results are ranked by relevance and strength; mark them afterwards with hippo_outcome."""


def hippo_assemble(
    session_id: Annotated[str, Field(description="The session whose continuity to assemble.")],
    budget: Budget = 4000,
    fresh_tail_count: Annotated[int, Field(ge=0, description="How many newest items to show in full.")] = 10,
    summarize_older: Annotated[
        bool, Field(description="Show older items as one-line bullets (at most 120 characters).")
    ] = True,
    scope: Annotated[str | None, Field(description="Only items of this scope or of none.")] = None,
) -> None:
    """Rebuild one session's working context: its logged events and handoffs in order, the newest in
    full and older ones summarised, within the budget."""


def hippo_drill(
    summary_id: Annotated[str, Field(description="Id of a merged memory (sem_...).")],
    limit: Annotated[int, Field(ge=1, description="At most this many parents listed.")] = 50,
    budget: Annotated[
        int | None, Field(ge=0, description="Token budget; default: the store's recall budget (4000).")
    ] = None,
    depth: Annotated[int, Field(ge=1, le=10, description="How many levels of parents to follow.")] = 1,
) -> None:
    """List the memories a merged (consolidated) memory was made from, following its parents."""


def hippo_remember(
    text: Annotated[str, Field(description="The lesson or fact, self-contained (at least 3 characters).")],
    error: Annotated[bool, Field(description="A lesson from a mistake: tagged error, kept longer.")] = False,
    pin: Annotated[bool, Field(description="Pin it: always injected, never fades.")] = False,
    tag: Annotated[str | list[str] | None, Field(description="One tag or a list of tags.")] = None,
    global_: Annotated[
        bool, Field(alias="global", description="Store it in the user's global store, not the project's.")
    ] = False,
) -> None:
    """Store a memory in the project store (or the global store) for future sessions."""


def hippo_outcome(
    good: Annotated[bool, Field(description="true if the memories helped, false if they misled.")],
    ids: Annotated[
        list[str] | None, Field(description="Memory ids; default: everything the last hippo_recall returned.")
    ] = None,
) -> None:
    """Mark recalled memories as helpful or misleading, which strengthens or weakens them."""


def hippo_context(
    query: Annotated[str | None, Field(description="Focus on this; default: the strongest memories.")] = None,
    budget: Annotated[int, Field(ge=0, description="Token budget; 0 returns nothing.")] = 1500,
    scope: Scope = None,
    pinned_only: Annotated[bool, Field(description="Only the pinned memories block.")] = False,
) -> None:
    """A compact block of project memory to keep in mind while working, with the active task first."""


def hippo_status() -> None:
    """Counts, strength and health of the memory stores this project uses."""


def hippo_learn(
    days: Annotated[int, Field(ge=1, description="How many days of git history to read.")] = 7,
) -> None:
    """Learn lessons from recent git commits of the current repository (fixes, reverts, migrations)."""


def hippo_conflicts(
    status: Annotated[
        Literal["open", "resolved", "all"], Field(description="Which conflicts to list.")
    ] = "open",
) -> None:
    """List pairs of memories that contradict each other."""


def hippo_resolve(
    conflict_id: Annotated[int, Field(description="The conflict's number, from hippo_conflicts.")],
    keep: Annotated[str, Field(description="Id of the memory to keep (one side of the conflict).")],
    forget: Annotated[bool, Field(description="Delete the other memory instead of weakening it.")] = False,
    reject_loser: Annotated[
        bool, Field(description="Delete the other memory and refuse its text from now on.")
    ] = False,
    reason: Annotated[str | None, Field(description="Why, for the audit log.")] = None,
) -> None:
    """Settle a conflict by keeping one memory; the other is weakened, forgotten or rejected."""


def hippo_share(
    id: Annotated[str, Field(description="Id of a project memory.")],
    force: Annotated[bool, Field(description="Share even when its transfer score is low.")] = False,
) -> None:
    """Copy a project memory to the user's global store so other projects can recall it."""


def hippo_peers() -> None:
    """List the projects that have shared memories to the global store."""


def hippo_predict_baserate(
    class_tag: Annotated[str, Field(description="A tag naming a kind of task, e.g. migration.")],
) -> None:
    """How past sessions of this kind ended: counts and rates of success, failure and partial among
    trace memories carrying the tag."""


CardId = Annotated[int, Field(ge=1, le=MAX_ID, description="The card's number, from hippo_card_list.")]
Run = Annotated[
    int | None,
    Field(
        ge=1,
        le=MAX_ID,
        description="The run you hold (from hippo_card_claim); refused when it is no longer live.",
    ),
]


def hippo_card_list(
    status: Annotated[
        Literal["waiting", "ready", "running", "blocked", "review", "done", "shelved"] | None,
        Field(description="Only cards in this state; default: all."),
    ] = None,
) -> None:
    """List the work queue's cards, newest-updated first: number, state and title."""


def hippo_card_show(card_id: CardId) -> None:
    """One card in full: its contract, dependencies, runs, comments and latest handoff."""


def hippo_card_create(
    title: Annotated[str, Field(description="What the card asks for.")],
    repo: Annotated[str | None, Field(description="The repository it is about.")] = None,
    contract: Annotated[str | None, Field(description="What done means.")] = None,
    budget: Annotated[int | None, Field(ge=0, description="A budget, in the team's unit.")] = None,
    depends_on: Annotated[
        list[int] | None, Field(description="Cards that must be done before this one is ready.")
    ] = None,
) -> None:
    """Add a card to the work queue: ready, or waiting while a dependency is not done."""


def hippo_card_claim(
    card_id: CardId,
    runtime: Annotated[str, Field(description="Who works on it: claude-code, codex, ...")],
) -> None:
    """Claim a ready or blocked card: it becomes running under a new run with a 4-hour lease.
    Exactly one of two agents claiming the same card at once wins."""


def hippo_card_move(
    card_id: CardId,
    action: Annotated[
        Literal["heartbeat", "block", "review", "complete"],
        Field(description="heartbeat (renew the lease), block, review, or complete (a card in review)."),
    ],
    run: Run = None,
    reason: Annotated[str | None, Field(description="With block: why (required).")] = None,
    outcome: Annotated[
        Literal["success", "failure", "partial"] | None,
        Field(description="With complete (required): success makes it done, else shelved."),
    ] = None,
) -> None:
    """Move a card you hold: renew its lease, block it with a reason, hand it to review, or complete
    it; completing with success makes the cards waiting on it ready."""


def hippo_card_comment(
    card_id: CardId,
    body: Annotated[str, Field(description="The comment.")],
) -> None:
    """Add a comment to a card."""


# Served in the order of TOOL_NAMES; each name is a signature above.
TOOLS: tuple[Callable[..., None], ...] = tuple(globals()[name] for name in TOOL_NAMES)
