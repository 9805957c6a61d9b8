"""What an import will store: chunks or export records in, new memories and their rows out.

CPU-bound (the handler runs it in a worker thread; its only reads are the store's answers to
`stored`, from that thread): the import core's verdicts, the memories built from them, and each
row exactly as the memories table takes it (digest and index terms computed here, not inside the
write transaction).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from hippod.calls.progress import Steps
from hippod.ingest.export_doc import ParsedExport, Record
from hippod.ingest.import_core import (
    Prepared,
    StoredDuplicates,
    Verdict,
    judge,
    judge_batches,
    merge_tags,
)
from hippod.lifecycle.new_memory import Origin, origin_memory
from hippod.model.digest import content_digest, refused
from hippod.model.memory import Memory
from hippod.model.strength import initial_half_life
from hippod.model.terms import fts_columns
from hippod.store.memory_codec import memory_values

FORMAT_TAGS: dict[str, tuple[str, ...]] = {
    "chatgpt": ("imported", "chatgpt"),
    "claude": ("imported", "claude"),
    "cursor": ("imported", "cursor"),
    "markdown": ("imported",),
    "file": ("imported",),
}

MakeMemory = Callable[[str, list[str]], Memory]
FromRecord = Callable[[Record], Memory]


@dataclass(frozen=True, slots=True)
class ChunkMemory:
    """The MakeMemory of an import of chunks: plain values, so a planning process makes the same."""

    origin: Origin
    fmt: str
    default_half_life: float

    def __call__(self, text: str, tags: list[str]) -> Memory:
        half_life = initial_half_life(tags, self.default_half_life)
        source = f"import:{self.fmt}"
        return origin_memory(
            self.origin, text, tags, half_life_days=half_life, source=source, confidence="observed"
        )


@dataclass(slots=True)
class Plan:
    """The outcome of an import before anything is written."""

    total: int = 0
    skipped: int = 0
    rejected: int = 0
    truncated: list[int] = field(default_factory=list)
    memories: list[Memory] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)

    @classmethod
    def joined(cls, parts: Iterable[Plan]) -> Plan:
        """One plan of all these parts, in order."""
        plan = cls()
        for part in parts:
            plan.extend(part)
        return plan

    def extend(self, part: Plan) -> None:
        """Add the plan of the next chunks (a part from `plan_chunk_parts`) to this one."""
        self.total += part.total
        self.skipped += part.skipped
        self.rejected += part.rejected
        self.truncated.extend(part.truncated)
        self.memories.extend(part.memories)
        self.digests.extend(part.digests)
        self.rows.extend(part.rows)

    def drop(self, positions: Collection[int], *, as_rejected: bool) -> None:
        """Take planned memories back out (found duplicate or rejected at write time)."""
        if not positions:
            return
        keep = [i for i in range(len(self.memories)) if i not in positions]
        self.memories = [self.memories[i] for i in keep]
        self.digests = [self.digests[i] for i in keep]
        self.rows = [self.rows[i] for i in keep] if self.rows else []
        if as_rejected:
            self.rejected += len(positions)
        else:
            self.skipped += len(positions)


def _refusing(texts: Sequence[str], digests: Sequence[str], rejected: Collection[str]) -> set[str]:
    """The digests of the texts a tombstone refuses, legacy tombstones included."""
    return {d for t, d in zip(texts, digests, strict=True) if refused(t, rejected)}


def _row(memory: Memory, digest: str) -> list[Any]:
    """A memory exactly as the memories table takes it."""
    return [*memory_values(memory), digest, *fts_columns(memory.content, memory.tags)]


def plan_chunk_parts(
    prepared: Prepared,
    stored: StoredDuplicates,
    rejected: Collection[str],
    make: MakeMemory,
    *,
    rows: bool = True,
    steps: Steps | None = None,
) -> Iterator[Plan]:
    """Verdicts for prepared chunks, and a new memory for each one to store, a batch of chunks at a
    time (import_core.JUDGE_BATCH): each part is the plan of the chunks judged since the last one,
    so a writer can store a part while the next is judged. `stored` says which chunks are
    near-copies of a stored memory."""
    steps = steps or Steps.quiet()
    texts = prepared.texts
    digests = [content_digest(t) for t in texts]
    steps.begin("checking for duplicates", len(texts))
    batches = judge_batches(texts, digests, stored, _refusing(texts, digests, rejected), steps=steps)
    for start, verdicts in batches:
        part = Plan(total=len(verdicts), truncated=prepared.truncated if start == 0 else [])
        for i, verdict in enumerate(verdicts, start):
            if verdict is Verdict.DUPLICATE:
                part.skipped += 1
            elif verdict is Verdict.REJECTED:
                part.rejected += 1
            else:
                part.memories.append(make(texts[i], prepared.tags[i]))
                part.digests.append(digests[i])
        if rows:
            part.rows = [_row(m, d) for m, d in zip(part.memories, part.digests, strict=True)]
        yield part
    steps.end()


def _heads(records: Sequence[Record]) -> list[int]:
    """For each record, the record at the end of its `superseded_by` chain within the document
    (itself when it is not superseded by a record of the document)."""
    by_id = {r.id: i for i, r in enumerate(records) if r.id}
    heads: list[int] = []
    for i, record in enumerate(records):
        seen = {i}
        current = i
        target = record.superseded_by
        while target in by_id and by_id[target] not in seen:
            current = by_id[target]
            seen.add(current)
            target = records[current].superseded_by
        heads.append(current)
    return heads


def plan_records(
    parsed: ParsedExport,
    extra_tags: Sequence[str],
    stored: StoredDuplicates,
    rejected: Collection[str],
    make: FromRecord,
    *,
    rows: bool = True,
    steps: Steps | None = None,
) -> Plan:
    """Verdicts for the records of a JSON export, and the memories to store.

    A record superseded by another record of the same export is not checked for duplicates: it
    comes in when its replacement does (still superseded, pointing at the new id), and is
    skipped with it otherwise. A `superseded_by` naming no record of the export is dropped.
    """
    steps = steps or Steps.quiet()
    records = parsed.records
    for record in records:
        record.tags = merge_tags(record.tags, extra_tags)
    heads = _heads(records)
    check = [heads[i] == i for i in range(len(records))]
    texts = [r.content for r in records]
    digests = [content_digest(t) for t in texts]
    steps.begin("checking for duplicates", len(texts))
    verdicts = judge(texts, digests, stored, _refusing(texts, digests, rejected), check=check, steps=steps)
    steps.end()
    for i, head in enumerate(heads):
        if verdicts[i] is Verdict.NEW and verdicts[head] is not Verdict.NEW:
            verdicts[i] = Verdict.DUPLICATE
    plan = Plan(total=len(records))
    new_ids: dict[int, str] = {}
    built: list[tuple[int, Memory]] = []
    for i, (record, verdict) in enumerate(zip(records, verdicts, strict=True)):
        if verdict is Verdict.DUPLICATE:
            plan.skipped += 1
        elif verdict is Verdict.REJECTED:
            plan.rejected += 1
        else:
            memory = make(record)
            new_ids[i] = memory.id
            built.append((i, memory))
    by_id = {r.id: i for i, r in enumerate(records) if r.id}
    for i, memory in built:
        memory.superseded_by = _successor(i, records, by_id, new_ids, heads[i])
        plan.memories.append(memory)
        plan.digests.append(digests[i])
    if rows:
        steps.begin("preparing memories", len(plan.memories))
        plan.rows = [_row(m, d) for m, d in steps.track(zip(plan.memories, plan.digests, strict=True))]
        steps.end()
    return plan


def _successor(
    i: int, records: Sequence[Record], by_id: dict[str, int], new_ids: dict[int, str], head: int
) -> str | None:
    """The new id of the nearest imported record after record i in its supersede chain."""
    if head == i:
        return None
    current, seen = i, {i}
    while True:
        target = records[current].superseded_by
        if target not in by_id or by_id[target] in seen:
            return None
        current = by_id[target]
        seen.add(current)
        if current in new_ids:
            return new_ids[current]
