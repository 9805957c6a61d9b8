"""The mirror file of an open conflict, `conflicts/conflict_<id>.md` (memory-model.md §2)."""

from __future__ import annotations

from hippod.store.conflicts import ConflictRecord

PREVIEW_CHARS = 120


def path(number: int) -> str:
    return f"conflicts/conflict_{number}.md"


def render(conflict: ConflictRecord, texts: dict[str, str]) -> str:
    """Front matter with the conflict's fields, then each side's id and first 120 chars."""
    fields = [
        ("id", conflict.id),
        ("status", conflict.status),
        ("reason", conflict.reason),
        ("score", f"{conflict.score:.2f}"),
        ("memory_a", conflict.memory_a_id),
        ("memory_b", conflict.memory_b_id),
        ("detected_at", conflict.detected_at),
        ("updated_at", conflict.updated_at),
    ]
    if conflict.tenant_id != "default":
        fields.append(("tenant_id", conflict.tenant_id))
    front = "\n".join(f"{k}: {v}" for k, v in fields)
    sides = "\n".join(
        f"- {mid}: {' '.join(texts.get(mid, '(gone)').split())[:PREVIEW_CHARS]}"
        for mid in (conflict.memory_a_id, conflict.memory_b_id)
    )
    return f"---\n{front}\n---\n\n{sides}\n"
