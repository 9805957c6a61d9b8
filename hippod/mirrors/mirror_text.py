"""The text of the memory mirrors: one file per memory (memory-model.md §3), or one section of a
day file in the day layout (mirrors/mirror_days.py).

Mirrors are committed with the project, so they hold what a memory is, never how it has been used:
the numbers recalls, outcomes and sleeps move on their own (strength, retrieval count, last
retrieval, half-life, outcome counts) stay in the database, where `inspect` shows them, and a
mirror's text changes only when the memory itself does (memory-model.md §3 lists them too: a file
that changed with every recall dirtied the project's git status).
"""

from __future__ import annotations

import re

from hippod.model.memory import Memory

UNDATED = "undated"
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def fields(memory: Memory) -> list[tuple[str, object]]:
    """The front matter's fields, in order: memory-model.md §3's without the usage numbers."""
    values: list[tuple[str, object]] = [
        ("id", memory.id),
        ("created", memory.created),
        ("layer", memory.layer),
        ("tags", memory.tags),
        ("emotional_valence", memory.emotional_valence),
        ("schema_fit", memory.schema_fit),
        ("source", memory.source),
        ("conflicts_with", memory.conflicts_with),
        ("pinned", memory.pinned),
        ("confidence", memory.confidence),
        ("parents", memory.parents),
        ("kind", memory.kind),
        ("scope", memory.scope),
        ("owner", memory.owner),
        ("artifact_ref", memory.artifact_ref),
        ("superseded_by", memory.superseded_by),
    ]
    if memory.tenant_id != "default":
        values.append(("tenant_id", memory.tenant_id))
    if memory.origin_project is not None:
        values.append(("origin_project", memory.origin_project))
    return values


def render(memory: Memory) -> str:
    """The mirror file: YAML front matter, a blank line, then the content verbatim."""
    front = "\n".join(f"{key}: {_scalar(value)}" for key, value in fields(memory))
    return f"---\n{front}\n---\n\n{memory.content}\n"


def day_of(created: str) -> str:
    """The day a memory is filed under in the day layout: its created date, or `undated`."""
    day = created[:10]
    return day if _DAY.fullmatch(day) else UNDATED


def day_file(layer: str, day: str, part: int = 1) -> str:
    """A day file's path relative to the store root: `<layer>/YYYY/MM/YYYY-MM-DD.md`, its later
    parts `YYYY-MM-DD.p2.md` and so on; undated memories in `<layer>/undated.md`."""
    name = day if part == 1 else f"{day}.p{part}"
    if day == UNDATED:
        return f"{layer}/{name}.md"
    return f"{layer}/{day[:4]}/{day[5:7]}/{name}.md"


def day_header(layer: str, day: str, part: int) -> str:
    """The first lines of a day file."""
    which = "" if part == 1 else f" (part {part})"
    return f"# {layer} · {day}{which}\n\n"


def section(memory: Memory) -> str:
    """One memory in a day file: a heading with its id, its other fields in a YAML block, then the
    content verbatim."""
    front = "\n".join(f"{key}: {_scalar(value)}" for key, value in fields(memory) if key != "id")
    return f"## {memory.id}\n\n```yaml\n{front}\n```\n\n{memory.content}\n\n"
