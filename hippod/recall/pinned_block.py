"""The per-prompt hook's block (recall.md §9, pinned injection): order, fill, render, digest.

Nothing here depends on the clock, so the block is byte-identical while its memories are unchanged.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import msgspec

from hippod.model.memory import Memory
from hippod.recall import cut
from hippod.recall.score import scope_multiplier

HEADING = "## Hippo memory"
PINNED = "### Pinned"
RECENT = "### Recent"
# Claude Code delivers an additionalContext of 10,000 characters whole and cuts longer ones.
MAX_CHARS = 10_000
GLOBAL_FACTOR = 1 / 1.2
DEDUPE_PREFIX = 200
# Path tags locate a memory for ranking; on every prompt they would only cost tokens.
PATH_TAG = "path:"


@dataclass(frozen=True, slots=True)
class Entry:
    """One memory of the block, with the store it came from ("local" or "global"); `full_chars` is
    the memory's whole length when the block shows it cut (its `memory.content` is then the cut)."""

    memory: Memory
    source: str
    full_chars: int | None = None


@dataclass(frozen=True, slots=True)
class Block:
    """The rendered markdown ('' when nothing fits) and the entries it holds, per section."""

    markdown: str
    pinned: list[Entry]
    recent: list[Entry]

    @property
    def items(self) -> int:
        return len(self.pinned) + len(self.recent)


def pinned_score(entry: Entry, active_scope: str | None) -> float:
    """A pinned memory's rank: strength 1 times the scope boost, global rows times 1/1.2."""
    score = scope_multiplier(entry.memory.tags, active_scope)
    return score * GLOBAL_FACTOR if entry.source == "global" else score


def order_pinned(entries: Sequence[Entry], active_scope: str | None) -> list[Entry]:
    """Pinned entries by score descending, then created descending, then id (for a stable block)."""
    by_id = sorted(entries, key=lambda e: e.memory.id)
    by_created = sorted(by_id, key=lambda e: e.memory.created, reverse=True)
    return sorted(by_created, key=lambda e: pinned_score(e, active_scope), reverse=True)


def order_recent(entries: Sequence[Entry]) -> list[Entry]:
    """Recent entries newest first by created, then id."""
    by_id = sorted(entries, key=lambda e: e.memory.id)
    return sorted(by_id, key=lambda e: e.memory.created, reverse=True)


def dedupe(entries: Sequence[Entry], seen: set[str] | None = None) -> list[Entry]:
    """Drop later entries whose text repeats an earlier one's (a project copy of a global row)."""
    seen = set() if seen is None else seen
    kept: list[Entry] = []
    for entry in entries:
        key = content_key(entry.memory)
        if key not in seen:
            seen.add(key)
            kept.append(entry)
    return kept


def content_key(memory: Memory) -> str:
    return memory.content.strip().lower()[:DEDUPE_PREFIX]


def line(entry: Entry) -> str:
    """`- [global] [<confidence>] <content> [<tags>]`, path tags left out; continuation lines are indented
    into the bullet."""
    mem = entry.memory
    prefix = "[global] " if entry.source == "global" else ""
    content = "\n  ".join(mem.content.strip().splitlines())
    shown = [t for t in mem.tags if not t.startswith(PATH_TAG)]
    tags = f" [{', '.join(shown)}]" if shown else ""
    return f"- {prefix}[{mem.confidence}] {content}{tags}"


def render(pinned: Sequence[Entry], recent: Sequence[Entry]) -> str:
    """The markdown block; a section with no entries is left out, and with none at all it is ''."""
    if not pinned and not recent:
        return ""
    parts = [HEADING]
    if pinned:
        parts += ["", PINNED, *(line(e) for e in pinned)]
    if recent:
        parts += ["", RECENT, *(line(e) for e in recent)]
    return "\n".join(parts)


def fill(pinned: Sequence[Entry], recent: Sequence[Entry], budget: int, max_chars: int = MAX_CHARS) -> Block:
    """Take entries in order (pinned, then recent) while the block stays within `budget` tokens and
    `max_chars` characters; an entry that does not fit is skipped and the next one tried. Then the
    first skipped entry longer than cut.LEAST_TEXT is cut to what is left, if that much of its text
    fits (the rule of pack.pack)."""
    # ceil(chars / 4) <= budget exactly when chars <= 4 x budget: one limit, in characters.
    limit = min(max_chars, 4 * budget)
    entries = [*((e, True) for e in pinned), *((e, False) for e in recent)]
    taken: dict[int, Entry] = {}

    def block(chosen: dict[int, Entry]) -> Block:
        order = sorted(chosen)
        in_pinned = [chosen[i] for i in order if entries[i][1]]
        in_recent = [chosen[i] for i in order if not entries[i][1]]
        return Block(render(in_pinned, in_recent), in_pinned, in_recent)

    skipped: list[int] = []
    for index, (entry, _) in enumerate(entries):
        if len(block({**taken, index: entry}).markdown) <= limit:
            taken[index] = entry
        else:
            skipped.append(index)
    first = next((i for i in skipped if len(entries[i][0].memory.content) > cut.LEAST_TEXT), None)
    if first is not None:
        entry = entries[first][0]

        def fits(text: str) -> bool:
            return len(block({**taken, first: _showing(entry, text)}).markdown) <= limit

        text = cut.fit(entry.memory.content, entry.memory.id, fits)
        if text is not None:
            taken[first] = _showing(entry, text, full_chars=len(entry.memory.content))
    return block(taken)


def _showing(entry: Entry, text: str, full_chars: int | None = None) -> Entry:
    """The entry with `text` in place of its memory's content (a cut of it when `full_chars` is given)."""
    return Entry(dataclasses.replace(entry.memory, content=text), entry.source, full_chars)


def digest(markdown: str) -> str:
    """sha256 of the block, the skip-unchanged key."""
    return hashlib.sha256(markdown.encode("utf-8")).hexdigest()


def additional_context(markdown: str) -> str:
    """Claude Code's UserPromptSubmit answer: one JSON line carrying the block as additional context."""
    document = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": markdown}}
    return msgspec.json.encode(document).decode()
