"""Typed reply data of capture-error and failures (ingest.md §7, continuity.md §8).
See replies.py for the conventions."""

from __future__ import annotations

from hippoctl.protocol.replies import Reply


class CaptureErrorReply(Reply):
    """What capture-error did with one failed tool call (the hook prints nothing either way)."""

    outcome: str  # stored, duplicate, interrupt, permission_declined, empty_search or rejected
    memory_id: str | None = None  # the stored memory, or the earlier one for a duplicate
    store: str = ""


class CrossSession(Reply):
    failures: int = 0
    distinct: int = 0


class FailuresReply(Reply):
    days: int
    by_outcome: dict[str, int]
    by_tool: dict[str, int]
    cross_session: CrossSession
