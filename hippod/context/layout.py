"""The printed `context` block (recall.md §9.6-§9.7): continuity preamble, memory bullets, framing.

Pure functions: the handler ranks and fills the budget, these build the exact lines it counts.
"""

from __future__ import annotations

from collections.abc import Sequence

from hippoctl.protocol.messages_ingest import FORMATS, FRAMINGS
from hippoctl.protocol.replies_context import ContextMemory
from hippoctl.protocol.wording import plural
from hippod.store.sqlite.continuity import Event, Snapshot

__all__ = ["FORMATS", "FRAMINGS"]
EVENT_CHARS = 400
# The recent events of its session a continuity preamble shows.
PREAMBLE_EVENTS = 5
# Claude Code delivers an additionalContext block of 10,000 characters whole and cuts longer ones.
ADDITIONAL_CONTEXT_CHARS = 10_000


def framed(entry: ContextMemory, framing: str) -> str:
    """The memory's text under a framing: observe marks unverified rows as past observations."""
    if framing == "suggest":
        return f"Consider: {entry.content}"
    if framing == "observe" and entry.confidence != "verified":
        return f"Previously observed ({entry.created[:10]}): {entry.content}"
    return entry.content


def bullet(entry: ContextMemory, framing: str) -> str:
    """`- [global] [<confidence>] [aged] <framed text> [<tags>] (NN%)`; assert drops the labels."""
    parts = ["-"]
    if framing != "assert":
        if entry.source == "global":
            parts.append("[global]")
        parts.append(f"[{entry.confidence}]")
        if entry.aged:
            parts.append("[aged]")
    # Continuation lines are indented so a multi-line memory stays one list item.
    parts.append(framed(entry, framing).replace("\n", "\n  "))
    if entry.tags:
        parts.append(f"[{', '.join(entry.tags)}]")
    parts.append(f"({round(entry.strength * 100)}%)")
    return " ".join(parts)


def heading(count: int, tokens: int) -> str:
    return f"## Project Memory ({plural(count, 'entry')}, {plural(tokens, 'token')})"


# The heading with its numbers padded to 6 digits, so its size is known before the fill.
RESERVED_HEADING = "## Project Memory (000000 entries, 000000 tokens)"


def other_heading(count: int) -> str:
    return f"## Other-project memory (explicitly requested, {plural(count, 'entry')})"


RESERVED_OTHER_HEADING = "## Other-project memory (explicitly requested, 000000 entries)"


def snapshot_block(snapshot: Snapshot) -> str:
    lines = ["## Active task", f"Task: {snapshot.task}", f"Summary: {snapshot.summary}"]
    if snapshot.next_step:
        lines.append(f"Next step: {snapshot.next_step}")
    return "\n".join(lines)


def events_block(events: Sequence[Event]) -> str:
    lines = ["## Recent session events"]
    lines += [f"- [{e.event_type}] {e.content[:EVENT_CHARS]}" for e in events]
    return "\n".join(lines)


def section(title: str, bullets: Sequence[str]) -> str:
    return "\n".join([title, *bullets])


def assemble(blocks: Sequence[str]) -> str:
    """The printed block: its non-empty parts separated by blank lines."""
    return "\n\n".join(b for b in blocks if b)


def cap(text: str, limit: int = ADDITIONAL_CONTEXT_CHARS) -> str:
    """At most `limit` characters, cut at the last line that fits."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    newline = cut.rfind("\n")
    return cut[:newline] if newline > 0 else cut
