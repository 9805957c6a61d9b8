"""The memory record as the daemon handles it in Python (memory-model.md §6)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from hippod.base.clock import days_between
from hippod.model.strength import StrengthParts, strength_parts

# Column order of the memories table; Memory fields follow it.
COLUMNS = (
    "id",
    "tenant_id",
    "content",
    "layer",
    "kind",
    "created",
    "valid_from",
    "last_retrieved",
    "retrieval_count",
    "half_life_days",
    "strength",
    "emotional_valence",
    "schema_fit",
    "tags",
    "source",
    "confidence",
    "pinned",
    "outcome_positive",
    "outcome_negative",
    "outcome_score",
    "conflicts_with",
    "parents",
    "merged_into",
    "superseded_by",
    "scope",
    "owner",
    "artifact_ref",
    "origin_project",
    "source_session_id",
    "compaction_id",
    "trace_outcome",
    "extracted_from",
    "legacy_base",
    "updated_at",
)


@dataclass(slots=True)
class Memory:
    """One row of `memories`, with list fields decoded."""

    id: str
    tenant_id: str
    content: str
    layer: str
    kind: str
    created: str
    valid_from: str
    last_retrieved: str
    retrieval_count: int
    half_life_days: float
    strength: float
    emotional_valence: str
    schema_fit: float
    tags: list[str]
    source: str
    confidence: str
    pinned: bool
    outcome_positive: int
    outcome_negative: int
    outcome_score: int | None
    conflicts_with: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    merged_into: str | None = None
    superseded_by: str | None = None
    scope: str | None = None
    owner: str | None = None
    artifact_ref: str | None = None
    origin_project: str | None = None
    source_session_id: str | None = None
    compaction_id: str | None = None
    trace_outcome: str | None = None
    extracted_from: str | None = None
    legacy_base: bool = False
    updated_at: str = ""

    def __reduce__(self) -> tuple[type[Memory], tuple[object, ...]]:
        """Pickled as its class and its fields in order (a sleep's plan comes from its planning
        process this way): rebuilt through __init__, a memory takes a fifth of the time the default
        takes, and the daemon's other threads get the interpreter between memories."""
        return (Memory, tuple(getattr(self, name) for name in COLUMNS))

    def strength_at(
        self,
        now: datetime,
        loss_aversion: float = 1.0,
        *,
        half_life_scale: float = 1.0,
        day_unit: float = 1.0,
    ) -> StrengthParts:
        """Live strength math for this memory at `now`; sleep's decay bases scale the half-life or
        count days in units of the mean gap between sleeps (memory-model.md §7)."""
        return strength_parts(
            days=days_between(self.last_retrieved, now) / day_unit,
            half_life_days=self.half_life_days * half_life_scale,
            pos=self.outcome_positive,
            neg=self.outcome_negative,
            retrieval_count=self.retrieval_count,
            valence=self.emotional_valence,
            pinned=self.pinned,
            loss_aversion=loss_aversion,
        )
