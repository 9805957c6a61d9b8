"""Typed reply data of the per-prompt hook, `context --pinned-only` (recall.md §9). See replies.py
for the conventions."""

from __future__ import annotations

from hippoctl.protocol.replies import Reply


class PinnedItem(Reply):
    id: str
    section: str  # pinned or recent
    source: str  # local or global
    confidence: str
    tags: list[str]
    created: str
    content: str
    # Cut to fit the budget: `content` is its start and a marker; `full_chars` is its whole length.
    truncated: bool = False
    full_chars: int | None = None


class PinnedReply(Reply):
    """`context --pinned-only`: the block, and whether it was sent or skipped as unchanged."""

    mode: str  # always "pinned"
    action: str  # sent, skipped, empty (nothing to send) or disabled (pinnedInject.enabled false)
    session_id: str | None
    budget: int
    tokens: int  # the block's estimate, also when skipped (what sending it would have cost)
    digest: str | None
    skips: int  # skips since the last send in this session
    recall: bool  # the recent section holds recall matches for the prompt (promptRecall)
    items: list[PinnedItem]
