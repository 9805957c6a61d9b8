"""Typed reply data of `capture`, `learn --git` and `watch` (ingest.md §3, §5, §6). See replies.py
for the conventions."""

from __future__ import annotations

from hippoctl.protocol.replies import Reply


class CapturedItem(Reply):
    category: str  # spec, decision, rule, error or preference
    text: str
    id: str | None = None  # None in a dry run


class CaptureReply(Reply):
    """`capture`: the items stored (or, in a dry run, that would be), and what was left out."""

    dry_run: bool
    source: str  # stdin, file or last-session
    path: str | None  # the file or transcript read
    captured: int
    skipped: int  # already in the store
    rejected: int  # tombstoned values
    secrets: int  # items the secret detector flagged, never stored
    items: list[CapturedItem]


class Invalidation(Reply):
    target: str
    kind: str  # migration, deprecation or removal
    ids: list[str]


class LearnGitReply(Reply):
    """`learn --git`: lessons stored, and the memories their migrations invalidated."""

    days: int
    repos: list[str]  # repository roots read
    commits: int
    learned: int
    skipped: int  # repeats within the run and near-copies of existing memories
    rejected: int
    lessons: list[str]
    ids: list[str]
    invalidated: list[Invalidation]


class WatchReply(Reply):
    """`watch` after a failed command: the memory stored, or the one that already said it."""

    stored: bool
    id: str
    content: str
