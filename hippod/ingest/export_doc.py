"""hippod's export documents (ingest.md §2): rendering JSON and markdown, and reading a JSON export
back, hippod's own or the original hippo's. Pure functions."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

import msgspec

from hippod.base.clock import iso, parse_iso
from hippod.ingest.chunking import FormatError, not_json
from hippod.model import strength as st
from hippod.model.memory import Memory

LAYERS = ("buffer", "episodic", "semantic", "trace")
CONFIDENCE = ("verified", "observed", "inferred", "stale")
VALENCES = ("neutral", "positive", "negative", "critical")
KINDS = ("distilled", "raw", "superseded")
# The original hippo's base half-life (7 days, x2 for errors) and its decision half-life.
LEGACY_BASE_MAX = 14.0
LEGACY_DECISION_BASE = 90.0
# SQLite stores integers in 64 bits; a larger count would fail the insert itself.
INT64_MAX = 2**63 - 1


def render_json(memories: list[Memory], *, version: str, store: str, now: datetime) -> str:
    """`{"hippod_version", "exported_at", "store", "memories": [full records]}`, indented."""
    document = {
        "hippod_version": version,
        "exported_at": iso(now),
        "store": store,
        "memories": [asdict(memory) for memory in memories],
    }
    return msgspec.json.format(msgspec.json.encode(document), indent=2).decode()


def render_markdown(memories: list[Memory], strengths: list[float]) -> str:
    """Per memory: `### <id>`, the content, then an italic line
    `_<layer> · <confidence> · <tags> · <created> · strength <2dp>_`."""
    blocks = []
    for memory, strength in zip(memories, strengths, strict=True):
        tags = ", ".join(memory.tags) or "-"
        meta = f"_{memory.layer} · {memory.confidence} · {tags} · {memory.created} · strength {strength:.2f}_"
        blocks.append(f"### {memory.id}\n\n{memory.content}\n\n{meta}\n")
    return "\n".join(blocks)


class Record(msgspec.Struct):
    """One memory of an export as read back; fields absent from the record take these defaults."""

    content: str
    id: str | None = None
    tags: list[str] = []
    layer: str = "episodic"
    kind: str = "distilled"
    confidence: str = "observed"
    pinned: bool = False
    created: str | None = None
    valid_from: str | None = None
    last_retrieved: str | None = None
    retrieval_count: int = 0
    half_life_days: float | None = None
    emotional_valence: str | None = None
    schema_fit: float = 0.5
    outcome_positive: int = 0
    outcome_negative: int = 0
    outcome_score: int | None = None
    source: str | None = None
    superseded_by: str | None = None
    scope: str | None = None
    owner: str | None = None
    artifact_ref: str | None = None
    origin_project: str | None = None
    source_session_id: str | None = None
    trace_outcome: str | None = None
    legacy_base: bool = False


class ParsedExport(msgspec.Struct):
    records: list[Record]
    hippod: bool  # False: the original hippo's export (no `hippod_version`)


def _choice(value: str, allowed: tuple[str, ...], what: str, n: int) -> None:
    if value not in allowed:
        raise FormatError(f"record {n}: {what} {value!r} is not one of {', '.join(allowed)}")


def _timestamp(value: str | None, what: str, n: int) -> str | None:
    if value is None:
        return None
    try:
        stored = iso(parse_iso(value))
        # A year before 1000 (or one that leaves UTC's range) renders as a time nothing reads back.
        parse_iso(stored)
    except (ValueError, OverflowError):
        raise FormatError(f"record {n}: {what} {value!r} is not an ISO-8601 time") from None
    return stored


def parse_export(data: bytes) -> ParsedExport:
    """The records of a JSON export: hippod's document, the original hippo's (an object with
    `memories`, or a bare array). Raises FormatError naming the first problem."""
    try:
        value: Any = _decode(data)
    except msgspec.DecodeError as exc:
        raise FormatError(not_json(data, exc)) from None
    except RecursionError:
        raise FormatError("not valid JSON (nested too deeply)") from None
    hippod = isinstance(value, dict) and "hippod_version" in value
    items = value.get("memories") if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise FormatError('expected an export: {"memories": [...]} or a JSON array of memories')
    records: list[Record] = []
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise FormatError(f"record {n} is not a JSON object")
        if not isinstance(item.get("content"), str) or not item["content"].strip():
            raise FormatError(f"record {n} has no content")
        try:
            record = msgspec.convert(item, Record, strict=False)
        except msgspec.ValidationError as exc:
            raise FormatError(f"record {n}: {exc}") from None
        records.append(_checked(record, n))
    return ParsedExport(records, hippod)


class _Key(str):
    """A key of an export's top-level object, read through a hook (`_decode` counts them)."""


def _decode(data: bytes) -> Any:
    """What `msgspec.json.decode(data)` gives, with an export's records decoded one at a time.

    One decode of a whole export is one call into C that holds the GIL, and the daemon's event loop
    with it, though it runs in a worker thread: 80 ms for 100,000 records (18 MB), and about 0.3 s
    near the 64 MiB limit by the same rate (bench/gil_holds.py). Decoded a record at a time, the
    interpreter can switch threads between records. A document read otherwise than a record at a
    time by that decode (not JSON, not an object or an array, `memories` not an array, a record
    that fails, a key given twice) is decoded whole: it raises what it always raised, or gives
    what it always gave.
    """
    keys = 0

    def counted(kind: type, text: Any) -> _Key:
        nonlocal keys
        keys += 1
        return _Key(text)

    try:
        top = msgspec.json.decode(data, type=dict[_Key, msgspec.Raw] | list[msgspec.Raw], dec_hook=counted)
        if isinstance(top, list):
            return [msgspec.json.decode(raw) for raw in top]
        if keys != len(top):
            # A key given twice: the value it replaced was skipped unchecked, which a whole decode checks.
            return msgspec.json.decode(data)
        # Keys in the document's order, as a whole decode gives them.
        value = {str(k): None if k == "memories" else msgspec.json.decode(raw) for k, raw in top.items()}
        if "memories" in value:
            raws = msgspec.json.decode(top[_Key("memories")], type=list[msgspec.Raw])
            value["memories"] = [msgspec.json.decode(raw) for raw in raws]
        return value
    except (msgspec.DecodeError, RecursionError):
        return msgspec.json.decode(data)


def _checked(record: Record, n: int) -> Record:
    record.content = record.content.strip()
    record.tags = list(dict.fromkeys(t.strip() for t in record.tags if t.strip()))
    _choice(record.layer, LAYERS, "layer", n)
    _choice(record.kind, KINDS, "kind", n)
    _choice(record.confidence, CONFIDENCE, "confidence", n)
    if record.emotional_valence is not None:
        _choice(record.emotional_valence, VALENCES, "emotional_valence", n)
    for name in ("retrieval_count", "outcome_positive", "outcome_negative"):
        if getattr(record, name) < 0:
            raise FormatError(f"record {n}: {name} is negative")
    for name in ("retrieval_count", "outcome_positive", "outcome_negative", "outcome_score"):
        value = getattr(record, name)
        if value is not None and not -INT64_MAX <= value <= INT64_MAX:
            raise FormatError(f"record {n}: {name} is too large")
    if record.half_life_days is not None and not record.half_life_days > 0:
        raise FormatError(f"record {n}: half_life_days must be more than 0")
    record.created = _timestamp(record.created, "created", n)
    record.valid_from = _timestamp(record.valid_from, "valid_from", n)
    record.last_retrieved = _timestamp(record.last_retrieved, "last_retrieved", n)
    return record


def is_legacy_base(record: Record) -> bool:
    """An original-hippo record whose half-life sits on the old 7-day base (or the old decision
    base): the next sleep rebases it once (sleep.md §3)."""
    if record.half_life_days is None:
        return False
    extra = 2 * record.retrieval_count
    if record.half_life_days <= LEGACY_BASE_MAX + extra:
        return True
    return record.source == "decision" and record.half_life_days == LEGACY_DECISION_BASE + extra


def record_memory(
    record: Record,
    *,
    memory_id: str,
    tenant: str,
    now: datetime,
    default_half_life: float,
    project: str,
    original: bool,
    loss_aversion: float = 1.0,
) -> Memory:
    """A new memory from an export record: the kept fields from the record, the rest fresh.

    `original` marks an original-hippo export, whose records on the old half-life base get the
    `legacy_base` flag (a hippod record keeps its own flag). The id is new and
    `superseded_by` is left for the caller, which maps it onto the new ids.
    """
    stamp = iso(now)
    created = record.created or stamp
    tags = record.tags
    memory = Memory(
        id=memory_id,
        tenant_id=tenant,
        content=record.content,
        layer=record.layer,
        kind=record.kind,
        created=created,
        valid_from=record.valid_from or created,
        last_retrieved=record.last_retrieved or created,
        retrieval_count=record.retrieval_count,
        half_life_days=(
            st.initial_half_life(tags, default_half_life)
            if record.half_life_days is None
            else record.half_life_days
        ),
        strength=1.0,
        emotional_valence=record.emotional_valence or st.valence_for_tags(tags),
        schema_fit=record.schema_fit,
        tags=tags,
        source=record.source or "import:json",
        confidence=record.confidence,
        pinned=record.pinned,
        outcome_positive=record.outcome_positive,
        outcome_negative=record.outcome_negative,
        outcome_score=record.outcome_score,
        scope=record.scope,
        owner=record.owner,
        artifact_ref=record.artifact_ref,
        origin_project=project if record.origin_project is None else record.origin_project,
        source_session_id=record.source_session_id,
        trace_outcome=record.trace_outcome,
        legacy_base=record.legacy_base or (original and is_legacy_base(record)),
        updated_at=stamp,
    )
    memory.strength = memory.strength_at(now, loss_aversion).strength
    return memory
