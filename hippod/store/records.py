"""The records the rows of either backend come back as (store/backend.py), beside the memory
record itself (model/memory.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, NamedTuple

import msgspec

from hippod.model.memory import Memory


@dataclass(frozen=True, slots=True)
class Remembered:
    """One remember request's write: the new memory and who asked for it (for its audit row)."""

    memory: Memory
    actor: str


class Candidate(NamedTuple):
    """A recall candidate: the memory, its BM25 terms (content then tags), and its row number.

    Row numbers grow in the order memories were stored, so two memories stored one right after
    the other have consecutive ones (recall's context factor reads them).
    """

    memory: Memory
    terms: list[str]
    rowid: int


class TermStats(NamedTuple):
    """What recall's BM25 reads of the whole store: how many rows it holds, and how many of them
    hold each of the query's terms (a term in none is left out)."""

    rows: int
    hits: dict[str, int]


@dataclass(frozen=True, slots=True)
class DormantMemory:
    """A memory in the dormant store, with when and why it went there."""

    memory: Memory
    dormant_at: str
    reason: str


class ConflictRecord(msgspec.Struct):
    """One memory_conflicts row."""

    id: int
    tenant_id: str
    memory_a_id: str
    memory_b_id: str
    reason: str
    score: float
    status: str
    resolved_by: str | None
    detected_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class Rejection:
    """A tombstoned value (memory-model.md §9.3): new text with its digest is refused."""

    digest: str
    reason: str
    rejected_by: str
    rejected_at: str
    source_memory_id: str | None
    normalized_chars: int


@dataclass(slots=True)
class ApiKey:
    """One HTTP API key (its secret kept only as a hash)."""

    row: int
    key_id: str
    key_hash: str
    tenant: str
    label: str | None
    role: str
    created_at: str
    revoked_at: str | None


@dataclass(frozen=True, slots=True)
class SentBlock:
    surface: str
    ts: datetime
    tokens: int


@dataclass(frozen=True, slots=True)
class Reread:
    """The re-read tokens of one surface on one local day; `last` is the newest call counted."""

    surface: str
    day: date
    tokens: int
    calls: int
    last: datetime


@dataclass(frozen=True, slots=True)
class Entry:
    id: int
    ts: str
    tenant: str
    actor: str
    op: str
    target: str | None
    metadata: dict[str, Any]
