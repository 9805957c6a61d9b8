"""Typed reply data of the continuity verbs: snapshot, session, handoff, current and wm
(continuity.md §1-§5). See replies.py for the conventions."""

from __future__ import annotations

import msgspec

from hippoctl.protocol.replies import Reply


class SnapshotItem(Reply):
    id: int
    task: str
    summary: str
    next_step: str | None
    status: str
    source: str
    session_id: str | None
    created_at: str
    updated_at: str


class SnapshotReply(Reply):
    """`snapshot save|show|clear`: the snapshot acted on (None when there was no active one)."""

    snapshot: SnapshotItem | None
    status: str = "active"


class EventItem(Reply):
    id: int
    session_id: str
    task: str | None
    type: str
    content: str
    source: str
    created_at: str


class EventsReply(Reply):
    """`session log|show`: the events, oldest first."""

    session_id: str | None
    task: str | None = None
    events: list[EventItem] = msgspec.field(default_factory=list)


class SessionLatestReply(Reply):
    snapshot: SnapshotItem | None
    events: list[EventItem] = msgspec.field(default_factory=list)


class HandoffItem(Reply):
    id: int
    session_id: str
    repo_root: str | None
    task_id: str | None
    summary: str
    next_action: str | None
    artifacts: list[str]
    created_at: str


class HandoffReply(Reply):
    """`handoff create|latest|show`, `session resume`: the handoff, or None when there is none."""

    handoff: HandoffItem | None


class CurrentEvent(Reply):
    type: str
    content: str
    created_at: str


class CurrentReply(Reply):
    """`current show`: the active task, its next step and its session's last 5 events."""

    task: str | None
    next_step: str | None = None
    session_id: str | None = None
    events: list[CurrentEvent] = msgspec.field(default_factory=list)


class WmItem(Reply):
    id: int
    scope: str
    session_id: str | None
    importance: float
    content: str
    created_at: str


class WmReply(Reply):
    """`wm push|read|clear|flush`: the entries pushed, read or removed, and how many were evicted."""

    scope: str
    entries: list[WmItem] = msgspec.field(default_factory=list)
    evicted: int = 0
    removed: int = 0
