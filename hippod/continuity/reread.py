"""Re-read accounting (continuity.md §7): how many times each block sent to Claude Code was read
again by later model calls of the same session. Pure functions over a transcript and ledger rows.

A model call is a distinct assistant `message.id` of the main chain (sidechain entries belong to
sub-agents, which never saw the block). A compaction drops every earlier block from the context,
so a block counts only the calls before the next compaction boundary. Its first call is the
original send; each later one is a re-read, counted on the local day of that call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from hippod.base.clock import parse_iso
from hippod.ingest import transcript
from hippod.store.records import Reread, SentBlock


@dataclass(frozen=True, slots=True)
class SessionCalls:
    """The model calls of a session (first time each message id appears) and its compaction times."""

    calls: list[datetime]
    boundaries: list[datetime]


def _when(record: dict[str, object]) -> datetime | None:
    value = record.get("timestamp")
    if not isinstance(value, str):
        return None
    try:
        return parse_iso(value)
    except ValueError:
        return None


def _is_boundary(record: dict[str, object]) -> bool:
    return (record.get("type") == "system" and record.get("subtype") == "compact_boundary") or bool(
        record.get("isCompactSummary")
    )


def session_calls(data: bytes) -> SessionCalls:
    """Model calls and compaction boundaries of a Claude Code transcript, each in time order."""
    first_seen: dict[str, datetime] = {}
    boundaries: list[datetime] = []
    for record in transcript.records(data):
        when = _when(record)
        if when is None:
            continue
        if _is_boundary(record):
            boundaries.append(when)
            continue
        if record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        message = record.get("message")
        message_id = message.get("id") if isinstance(message, dict) else None
        if isinstance(message_id, str) and message_id not in first_seen:
            first_seen[message_id] = when
    return SessionCalls(calls=sorted(first_seen.values()), boundaries=sorted(boundaries))


def rereads(session: SessionCalls, sent: Iterable[SentBlock]) -> list[Reread]:
    """Re-read tokens per (surface, local call day): tokens × (calls after the send, before the next
    boundary, minus the first)."""
    totals: dict[tuple[str, date], Reread] = {}
    for block in sent:
        end = next((b for b in session.boundaries if b > block.ts), None)
        window = [c for c in session.calls if c > block.ts and (end is None or c < end)]
        for call in window[1:]:
            key = (block.surface, call.astimezone().date())
            before = totals.get(key)
            if before is None:
                totals[key] = Reread(block.surface, key[1], block.tokens, 1, call)
            else:
                totals[key] = Reread(
                    block.surface,
                    key[1],
                    before.tokens + block.tokens,
                    before.calls + 1,
                    max(before.last, call),
                )
    return [totals[key] for key in sorted(totals)]
