"""`hippo_assemble`: one session's continuity (events and handoffs, continuity.md §2-§3) as a block
that fits a token budget. Pure functions: the handler reads the rows, this lays them out.

The newest `fresh_tail_count` items are shown in full; older ones, when `summarize_older`, as
one-line bullets of at most 120 characters. The budget is filled from the newest item back, so what
falls out is always the oldest part of the session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hippoctl.protocol.wording import plural
from hippod.continuity import render
from hippod.store.sqlite.continuity import Event, Handoff

BULLET_CHARS = 120
# Padded to 6 digits so their size is known before the fill (as recall's heading is).
RESERVED_HEADING_COUNTS = (999_999, 999_999)
RESERVED_LEFT_OUT = 999_999


@dataclass(frozen=True, slots=True)
class Item:
    """One continuity item: when it happened, its full text and its one-line summary."""

    created_at: str
    rank: int  # events before handoffs at the same instant
    row_id: int
    full: str
    brief: str


@dataclass(frozen=True, slots=True)
class Assembled:
    """The block, and how many items it shows in full, as bullets, or not at all."""

    text: str
    total: int
    full: int
    summarized: int
    left_out: int
    # What it shows, oldest first: each item with its text there and whether that is the whole of it.
    shown: tuple[tuple[Item, str, bool], ...] = ()


def event_item(event: Event) -> Item:
    brief = render.cut(f"- [{event.event_type}] {render.first_line(event.content)}", BULLET_CHARS)
    return Item(event.created_at, 0, event.id, render.event_line(event), brief)


def handoff_item(handoff: Handoff) -> Item:
    brief = render.cut(f"- [handoff #{handoff.id}] {render.first_line(handoff.summary)}", BULLET_CHARS)
    return Item(handoff.created_at, 1, handoff.id, render.handoff_block(handoff), brief)


def items(events: Sequence[Event], handoffs: Sequence[Handoff]) -> list[Item]:
    """Events and handoffs of one session, oldest first."""
    found = [event_item(e) for e in events] + [handoff_item(h) for h in handoffs]
    return sorted(found, key=lambda i: (i.created_at, i.rank, i.row_id))


def heading(session_id: str, shown: int, total: int) -> str:
    return f"## Session {session_id} ({shown} of {plural(total, 'item')})"


def left_out_line(count: int) -> str:
    return f"({plural(count, 'older item')} left out to fit the budget)"


def empty(session_id: str) -> str:
    return f"No continuity recorded for session {session_id}."


def assemble(
    session_id: str,
    found: Sequence[Item],
    *,
    budget: int,
    fresh_tail_count: int,
    summarize_older: bool,
) -> Assembled:
    """The session's block within `budget` tokens (ceil(chars / 4)); '' when the budget is 0."""
    total = len(found)
    if budget <= 0:
        return Assembled("", total, 0, 0, total)
    room = budget * 4
    if not found:
        text = empty(session_id)
        return Assembled(text if len(text) <= room else "", 0, 0, 0, 0)
    used = len(heading(session_id, *RESERVED_HEADING_COUNTS)) + 1 + len(left_out_line(RESERVED_LEFT_OUT)) + 1
    if used > room:
        return Assembled("", total, 0, 0, total)
    chosen: list[tuple[Item, str, bool]] = []
    full = summarized = 0
    for age, item in enumerate(reversed(found)):
        in_full = age < fresh_tail_count or not summarize_older
        # A fresh item too long for what is left is still worth its one-line summary.
        options = [(item.full, True), (item.brief, False)] if in_full else [(item.brief, False)]
        fits = next(((t, whole) for t, whole in options if used + len(t) + 1 <= room), None)
        if fits is None:
            break
        text, whole = fits
        used += len(text) + 1
        chosen.append((item, text, whole))
        full += whole
        summarized += not whole
    shown = len(chosen)
    lines = [heading(session_id, shown, total)]
    if shown < total:
        lines.append(left_out_line(total - shown))
    chosen.reverse()
    lines += [text for _, text, _ in chosen]
    return Assembled("\n".join(lines), total, full, summarized, total - shown, tuple(chosen))
