"""Dedupe and junk removal (sleep.md §6). Pure functions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from hippod.base.clock import parse_iso
from hippod.model.conflicts import STOPWORDS, conflict_between
from hippod.model.decay import is_protected
from hippod.model.memory import Memory
from hippod.model.tokenize import text_overlap, tokenize
from hippod.model.wordsets import TokenColumn, pairs

DUPLICATE_ABOVE = 0.7
JUNK_MIN_CHARS = 10

_RELEASE_NOISE = [
    re.compile(r"^(bump|release|prep|tag)\b.*\bv?\d+\.\d+", re.IGNORECASE),
    re.compile(r"^v?\d+\.\d+\.\d+([-+][\w.]+)?$", re.IGNORECASE),
    re.compile(r"^chore(\([^)]*\))?!?:\s*(release|bump|version|tag|prep)\b", re.IGNORECASE),
    re.compile(r"^merge (branch|pull request|remote-tracking branch)\b", re.IGNORECASE),
    re.compile(r"^wip\b", re.IGNORECASE),
]
_ASCII_WORD = re.compile(r"[A-Za-z]+")
_CAPITALISED = re.compile(r"^[A-Z]")


@dataclass(frozen=True, slots=True)
class Duplicate:
    deleted: Memory
    kept: Memory
    kind: str  # episodic, semantic or cross_layer
    overlap: float


def dedupe_kind(a: Memory, b: Memory) -> str:
    """semantic when both are semantic, cross_layer when the layers differ, else episodic."""
    if a.layer != b.layer:
        return "cross_layer"
    return "semantic" if a.layer == "semantic" else "episodic"


def _order_key(memory: Memory) -> tuple[int, int, int, str, str]:
    return (
        0 if is_protected(memory) else 1,
        -round(memory.strength / 0.01),
        -memory.retrieval_count,
        memory.content,
        memory.id,
    )


def _related(a: Memory, b: Memory) -> bool:
    return a.id in b.parents or b.id in a.parents


def dedupe(rows: Sequence[Memory], settled_through: datetime | None = None) -> list[Duplicate]:
    """Near-duplicates (overlap > 0.7) to delete, keeping the stronger copy (sleep.md §6).

    Superseded rows take no part. A deleted row deletes nothing further (our reading of "j still
    present"). A pair the conflict rules flag, a protected j, or a merged memory and its own source
    all stay.

    `settled_through` is when the previous sleep ran: two memories not changed since then (by
    `updated_at`) were compared by that sleep and both are still here, so one of the rules above
    keeps both. Only pairs with a changed or new memory on at least one side are looked at.
    """
    by_tenant: dict[str, list[Memory]] = {}
    for memory in rows:
        if memory.superseded_by is None:
            by_tenant.setdefault(memory.tenant_id, []).append(memory)
    found: list[Duplicate] = []
    for tenant in sorted(by_tenant):
        items = by_tenant[tenant]
        column = TokenColumn().extend(tokenize(m.content) for m in items)
        fresh = [settled_through is None or parse_iso(m.updated_at) >= settled_through for m in items]
        close = pairs(column, range(len(items)), DUPLICATE_ABOVE, strict=True, probe=fresh)
        found += [
            Duplicate(items[deleted], items[kept], dedupe_kind(items[kept], items[deleted]), overlap)
            for deleted, kept, overlap in walk(dict(enumerate(items)), close)
        ]
    return found


def walk(items: Mapping[int, Memory], close: Iterable[tuple[int, int]]) -> list[tuple[int, int, float]]:
    """(deleted, kept, overlap) by dedupe's rule, from the pairs of `items` that overlap above 0.7.

    Walking in dedupe order, an item goes when an earlier surviving item overlaps it (and neither
    rule keeps both); the same result as "each i deletes every later present j". Only the items
    of some pair need to be given. Pairs of two memories the previous sleep compared are left out
    by the caller (see `dedupe`).
    """
    neighbours: dict[int, list[int]] = {}
    for i, j in close:
        neighbours.setdefault(i, []).append(j)
        neighbours.setdefault(j, []).append(i)
    order = sorted(neighbours, key=lambda k: _order_key(items[k]))
    place = {k: at for at, k in enumerate(order)}
    kept: set[int] = set()
    found: list[tuple[int, int, float]] = []
    for k in order:
        b = items[k]
        earlier = sorted(
            (i for i in neighbours[k] if place[i] < place[k] and i in kept), key=place.__getitem__
        )
        keepers = [
            i
            for i in earlier
            if not is_protected(b)
            and not _related(items[i], b)
            and not conflict_between(items[i].content, b.content)
        ]
        if keepers:
            a = items[keepers[0]]
            found.append((k, keepers[0], text_overlap(a.content, b.content)))
        else:
            kept.add(k)
    return found


def junk_reason(content: str) -> str | None:
    """Why a row is junk to delete (short or release noise), or None."""
    text = content.strip()
    if len(text) < JUNK_MIN_CHARS:
        return "shorter than 10 chars"
    if any(p.search(text) for p in _RELEASE_NOISE):
        return "release noise"
    return None


def junk_warning(content: str) -> str | None:
    """Why a row looks weak (reported, kept), or None."""
    text = content.strip()
    lowered = text.lower()
    if lowered.startswith(("to ", "for ", "and ")) and len(text) < 50:
        return "starts like a fragment"
    substantive = [w for w in _ASCII_WORD.findall(text) if len(w) >= 3 and w.lower() not in STOPWORDS]
    if len(substantive) < 2:
        return "fewer than 2 substantive words"
    if len(text) < 40:
        words = text.split()
        capitalised = any(_CAPITALISED.match(w) for w in words[1:])
        specific = any(c.isdigit() for c in text) or any(c in text for c in "/\\`_(={")
        if not capitalised and not specific:
            return "short and unspecific"
    return None


@dataclass(frozen=True, slots=True)
class Junk:
    """A row junk removal deletes, or one it only warns about."""

    id: str
    tenant: str
    reason: str


def junk(rows: Sequence[Memory]) -> tuple[list[Junk], list[Junk]]:
    """(to delete, warnings) among unprotected rows."""
    removed: list[Junk] = []
    warned: list[Junk] = []
    for memory in rows:
        if is_protected(memory):
            continue
        reason = junk_reason(memory.content)
        if reason is not None:
            removed.append(Junk(memory.id, memory.tenant_id, reason))
            continue
        warning = junk_warning(memory.content)
        if warning is not None:
            warned.append(Junk(memory.id, memory.tenant_id, warning))
    return removed, warned
