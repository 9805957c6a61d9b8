"""Typed reply data of the compaction and session hooks (ingest.md §8, continuity.md §4,
integrations.md). See replies.py for the conventions."""

from __future__ import annotations

import msgspec

from hippoctl.protocol.replies import Reply
from hippoctl.protocol.replies_lifecycle import SleepReply


class PreCompactReply(Reply):
    """`pre-compact`: the compaction row made and whether a task snapshot was saved."""

    compaction_id: str | None = None  # None: no store to record it in
    snapshot: bool = False
    store: str = ""


class CompactionItem(Reply):
    """One item of the summary's `Memories for hippo` section and what became of it."""

    text: str
    # saved, secret, rejected, repeat (saved by an earlier compaction or earlier in this list),
    # too_long (kept in the compaction row only) or over_limit (after the 10th saved item)
    outcome: str
    memory_id: str | None = None


class PostCompactReply(Reply):
    compaction_id: str | None = None  # None: no store, nothing done
    saved: int = 0
    items: list[CompactionItem] = msgspec.field(default_factory=list)
    snapshot_restored: bool = False
    store: str = ""


class CompactResumeReply(Reply):
    restored: bool = False
    tokens: int = 0  # the ledger's estimate of the printed block


class SessionEndReply(Reply):
    queued: bool = False
    store: str = ""
    transcripts: list[str] = msgspec.field(
        default_factory=list
    )  # the transcripts the job captures and accounts


class LastSleepReply(Reply):
    """The consolidation a session end kept: `report` is that sleep's full reply (None when none was
    kept); `shown` when it had anything worth printing."""

    shown: bool = False
    kept: bool = False
    store: str = ""
    report: SleepReply | None = None
