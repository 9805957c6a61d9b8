"""Typed reply data of `context` (recall.md §9.8) and `tokens` (continuity.md §7).
See replies.py for the conventions."""

from __future__ import annotations

import msgspec

from hippoctl.protocol.replies import Reply


class ContextSnapshot(Reply):
    task: str
    summary: str
    next_step: str | None
    session_id: str | None
    updated_at: str


class ContextHandoff(Reply):
    id: int
    session_id: str
    summary: str
    next_action: str | None
    artifacts: list[str]
    created_at: str


class ContextEvent(Reply):
    type: str
    content: str
    created_at: str


class ContextMemory(Reply):
    id: str
    source: str  # local or global
    confidence: str
    aged: bool
    tags: list[str]
    created: str
    strength: float
    content: str
    framed: str
    other_project: bool = False  # listed under the --cross-project section
    score: float = 0.0  # the ranking score (in `*` mode: the strength, global rows x 1/1.2)
    # Cut to fit the budget: `content` is its start and a marker; `full_chars` is its whole length.
    truncated: bool = False
    full_chars: int | None = None


class ContextReply(Reply):
    """Exactly what the markdown form prints; `tokens` is that block's estimate."""

    mode: str  # query, all or pinned
    query: str | None
    budget: int
    tokens: int
    snapshot: ContextSnapshot | None = None
    handoff: ContextHandoff | None = None
    events: list[ContextEvent] = msgspec.field(default_factory=list)
    memories: list[ContextMemory] = msgspec.field(default_factory=list)


class SurfaceTokens(Reply):
    """One surface's figures; None where the surface has no such column."""

    sent: int = 0
    sends: int = 0
    reread: int | None = None
    skipped: int | None = None
    saved: int | None = None


class TokensReply(Reply):
    days: int
    since: str  # the first local calendar day counted
    surfaces: dict[str, SurfaceTokens]
    total: SurfaceTokens
    project: str | None = None  # with --here: the project counted
