"""What an import will store: chunks or export records in, new memories and their rows out.

CPU-bound (the handler runs it in a worker thread; its only reads are the store's answers to
`stored`, from that thread): the import core's verdicts, the memories built from them, and each
row exactly as the memories table takes it (digest and index terms computed here, not inside the
write transaction).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from hippod.calls.progress import Steps
from hippod.ingest.export_doc import ParsedExport, Record
from hippod.ingest.import_core import Prepared, StoredDuplicates, Verdict, judge, merge_tags
from hippod.model.digest import content_digest, refused
from hippod.model.memory import Memory
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


def _judge(
    texts: Sequence[str],
    digests: Sequence[str],
    stored: StoredDuplicates,
    rejected: Collection[str],
    steps: Steps,
    check: Sequence[bool] | None = None,
) -> list[Verdict]:
    # The digests of the texts a tombstone refuses, legacy tombstones included.
    refusing = {d for t, d in zip(texts, digests, strict=True) if refused(t, rejected)}
    steps.begin("checking for duplicates", len(texts))
    verdicts = judge(texts, digests, stored, refusing, check=check, steps=steps)
    steps.end()
    return verdicts


def _rows(plan: Plan, steps: Steps) -> None:
    steps.begin("preparing memories", len(plan.memories))
    plan.rows = [
        [*memory_values(memory), digest, *fts_columns(memory.content, memory.tags)]
        for memory, digest in steps.track(zip(plan.memories, plan.digests, strict=True))
    ]
    steps.end()


def plan_chunks(
    prepared: Prepared,
    stored: StoredDuplicates,
    rejected: Collection[str],
    make: MakeMemory,
    *,
    rows: bool = True,
    steps: Steps | None = None,
) -> Plan:
    """Verdicts for prepared chunks, and a new memory for each one to store; `stored` says which
    chunks are near-copies of a stored memory."""
    steps = steps or Steps.quiet()
    digests = [content_digest(t) for t in prepared.texts]
    verdicts = _judge(prepared.texts, digests, stored, rejected, steps)
    plan = Plan(total=len(prepared.texts), truncated=prepared.truncated)
    for text, tags, digest, verdict in zip(prepared.texts, prepared.tags, digests, verdicts, strict=True):
        if verdict is Verdict.DUPLICATE:
            plan.skipped += 1
        elif verdict is Verdict.REJECTED:
            plan.rejected += 1
        else:
            plan.memories.append(make(text, tags))
            plan.digests.append(digest)
    if rows:
        _rows(plan, steps)
    return plan


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
    verdicts = _judge(texts, digests, stored, rejected, steps, check)
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
        _rows(plan, steps)
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
