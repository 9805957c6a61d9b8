"""Request bodies of continuity, compaction and the session hooks (continuity.md, ingest.md §8,
integrations.md); part of messages.RequestBody."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol.body import Body

# --- continuity (continuity.md §1-§5) -----------------------------------------------------------


class SnapshotSave(Body):
    task: str
    summary: str
    next_step: str | None = None
    source: str = "cli"
    session: str | None = None  # None: HIPPO_SESSION_ID, else no session


class SnapshotShow(Body):
    pass


class SnapshotClear(Body):
    status: str = "cleared"


class SessionLog(Body):
    session_id: str
    content: str
    type: str = "note"
    task: str | None = None
    source: str = "cli"


class SessionShow(Body):
    """Events of one session (`--id`) or one task (`--task`); neither: HIPPO_SESSION_ID, else the
    session of the newest event."""

    session_id: str | None = None
    task: str | None = None
    limit: int = 8


class SessionLatest(Body):
    pass


class SessionResume(Body):
    pass


class HandoffCreate(Body):
    summary: str
    session_id: str  # the client fills HIPPO_SESSION_ID, else fallback-<epoch ms>-<client pid>
    next: str | None = None
    task: str | None = None
    artifacts: list[str] = []


class HandoffLatest(Body):
    pass


class HandoffShow(Body):
    id: int


class CurrentShow(Body):
    pass


class WmPush(Body):
    content: str
    scope: str = "default"
    importance: float = 0.5
    session: str | None = None  # None: HIPPO_SESSION_ID, else no session


class WmRead(Body):
    scope: str = "default"


class WmClear(Body):
    scope: str = "default"
    session: str | None = None  # None: every entry of the scope


class WmFlush(Body):
    scope: str = "default"
    session: str | None = None


# --- compaction and session hooks (ingest.md §8, continuity.md §4, integrations.md) ---------------


class PreCompact(Body):
    """The PreCompact hook: the host's JSON (session_id, transcript_path, cwd, trigger)."""

    payload: Any = None
    spool_key: str | None = None  # as on CaptureError: the request is applied once


class PostCompact(Body):
    """The PostCompact hook: the host's JSON (session_id, transcript_path, cwd, compact_summary)."""

    payload: Any = None
    spool_key: str | None = None


class CompactResume(Body):
    """SessionStart after a compaction: prints the snapshot back when it is fresh. Never spooled."""

    payload: Any = None


class SessionEnd(Body):
    """SessionEnd: queues sleep, transcript capture and re-read accounting, and returns at once."""

    payload: Any = None
    spool_key: str | None = None
    codex_offset: int | None = None  # byte offset of Codex's history.jsonl when the session began
    once: bool = False  # a session id that already ended in this store is not run again


class LastSleep(Body):
    """SessionStart: prints the consolidation kept by the previous session end; clears it unless keep."""

    keep: bool = False
    payload: Any = None
    verbose: bool = False  # the full report instead of the short summary


class Tokens(Body):
    """`tokens`: the token ledger's totals per surface (continuity.md §7)."""

    days: int = 30
    here: bool = False  # only the current project's rows


# Every request body of this family, for messages.RequestBody.
BODIES = (
    SnapshotSave
    | SnapshotShow
    | SnapshotClear
    | SessionLog
    | SessionShow
    | SessionLatest
    | SessionResume
    | HandoffCreate
    | HandoffLatest
    | HandoffShow
    | CurrentShow
    | WmPush
    | WmRead
    | WmClear
    | WmFlush
    | PreCompact
    | PostCompact
    | CompactResume
    | SessionEnd
    | LastSleep
    | Tokens
)
