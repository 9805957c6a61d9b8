"""The text layouts of continuity data (continuity.md §1-§4), shared by the verbs and the mirrors."""

from __future__ import annotations

from collections.abc import Sequence

from hippod.store.sqlite.continuity import Event, Handoff, Snapshot

NO_SNAPSHOT = "No active task snapshot."
CURRENT_EVENT_CHARS = 200


def one_line(text: str) -> str:
    """Text on one line: runs of whitespace (newlines too) become one space."""
    return " ".join(text.split())


def first_line(text: str) -> str:
    """The first line that holds anything, trimmed."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, the last one an ellipsis when it was longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def snapshot_block(snapshot: Snapshot | None) -> str:
    """The `# Active task` block of buffer/active-task.md and `snapshot show`; absent fields are left out."""
    if snapshot is None:
        return NO_SNAPSHOT
    lines = [
        "# Active task",
        f"- Task: {one_line(snapshot.task)}",
        f"- Summary: {one_line(snapshot.summary)}",
    ]
    if snapshot.next_step:
        lines.append(f"- Next step: {one_line(snapshot.next_step)}")
    if snapshot.session_id:
        lines.append(f"- Session: {snapshot.session_id}")
    lines.append(f"- Updated: {snapshot.updated_at}")
    return "\n".join(lines)


def event_line(event: Event, limit: int | None = None) -> str:
    content = one_line(event.content)
    if limit is not None:
        content = cut(content, limit)
    return f"- [{event.event_type}] {event.created_at} {content}"


def events_block(events: Sequence[Event]) -> str:
    return "\n".join(event_line(e) for e in events)


def session_file(session_id: str, events: Sequence[Event]) -> str:
    """buffer/recent-session.md: a heading naming the session, then its events oldest first."""
    return f"# Recent session {session_id}\n" + "".join(event_line(e) + "\n" for e in events)


def _handoff_time(created_at: str) -> str:
    # 2026-10-01T18:22:05.000Z -> 2026-10-01 18:22 UTC
    return f"{created_at[:10]} {created_at[11:16]} UTC"


def handoff_block(handoff: Handoff) -> str:
    """`## Handoff #7 (session s_1001b, 2026-10-01 18:22 UTC)` then Summary, Next and Artifacts."""
    lines = [
        f"## Handoff #{handoff.id} (session {handoff.session_id}, {_handoff_time(handoff.created_at)})",
        f"Summary: {one_line(handoff.summary)}",
    ]
    if handoff.next_action:
        lines.append(f"Next: {one_line(handoff.next_action)}")
    if handoff.task_id:
        lines.append(f"Task: {handoff.task_id}")
    if handoff.artifacts:
        lines.append(f"Artifacts: {', '.join(handoff.artifacts)}")
    return "\n".join(lines)
