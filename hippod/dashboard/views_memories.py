"""The dashboard's memory views: the overview (what `status` prints), the memory map by layer with
strength and decay curves, pinned memories and the dormant store."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import msgspec

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import StatusReply
from hippod.base import clock
from hippod.continuity.render import cut
from hippod.dashboard import strength_map as sm
from hippod.dashboard.calls import PAGE_SIZE, ViewCall, command, pages
from hippod.model import strength as st
from hippod.model.decay import average_gap_days
from hippod.model.memory import Memory
from hippod.store.sqlite import dashboard_reads as reads
from hippod.store.sqlite import reports
from hippod.store.sqlite.conflicts import count_dormant
from hippod.store.stores import SqliteStore

SNIPPET = 280  # characters of a memory's text in a table row
CURVES_SHOWN = 6  # decay curves drawn for a page: its first rows, unless ids are asked for
MAX_CURVES = 12


def snippet(text: str) -> str:
    return cut(text, SNIPPET)


class Overview(msgspec.Struct):
    status: StatusReply
    dormant_below: float
    at_risk_below: float


async def overview(call: ViewCall) -> Overview:
    """What `hippoctl status --json` answers from the store's folder, through the same handler."""
    status, _ = await call.dispatch(call.context(m.Status()))
    return Overview(status=status, dormant_below=sm.DORMANT_BELOW, at_risk_below=st.AT_RISK_BELOW)


class MapRow(msgspec.Struct):
    id: str
    layer: str
    content: str
    strength: float
    retrieval_count: int
    good: int
    bad: int
    pinned: bool
    superseded: bool
    created: str
    last_retrieved: str
    days_to_dormant: float | None
    protected: str | None  # why sleep never parks it


class Curve(msgspec.Struct):
    id: str
    label: str
    points: list[float | None]


class Curves(msgspec.Struct):
    days: list[float]
    series: list[Curve]
    basis: str
    mean_gap_days: float


class MemoryMap(msgspec.Struct):
    store: str
    total: int
    layers: list[Any]  # strength_map.LayerFigures
    bins: int
    dormant_below: float
    at_risk_below: float
    sort: str
    layer: str | None
    page: int
    pages: int
    rows: list[MapRow]
    curves: Curves


async def _basis(store: SqliteStore, loss_aversion: float) -> sm.DecayBasis:
    runs = await reads.sleep_runs(store.db.reader, 20)
    basis = str(store.config.get("decayBasis", "adaptive"))
    return sm.DecayBasis(basis, average_gap_days([r.ts for r in runs]), loss_aversion)


async def _reading(call: ViewCall, store: SqliteStore) -> sm.Reading:
    """The store's strengths read now, or as read less than a minute ago if nothing was written
    since: paging and sorting the map of a large store read its rows once."""
    async with call.stores.making:
        now = clock.now()
        key = (id(store), await reads.data_version(store.db.reader), int(now.timestamp() // 60))
        kept = call.stores.kept.get(("map", store.root, call.tenant))
        if kept is not None and kept[0] == key:
            reading: sm.Reading = kept[1]
            return reading
        rows = await reports.status_rows(store.db.reader, call.tenant)
        reading = await asyncio.to_thread(sm.read, rows, now, call.state.loss_aversion)
        call.stores.kept[("map", store.root, call.tenant)] = (key, reading)
        return reading


def _curves(memories: list[Memory], now: datetime, basis: sm.DecayBasis) -> Curves:
    """Each memory's decay curve on one shared axis long enough for the slowest to reach the threshold."""
    until = [sm.days_to_dormant(mem, now, basis) for mem in memories]
    horizon = max([d for d in until if d is not None] or [365.0])
    grid = sm.curve_grid(max(30.0, horizon * 1.05))
    series = [Curve(mem.id, snippet(mem.content)[:60], sm.curve(mem, now, grid, basis)) for mem in memories]
    return Curves(grid, series, basis.basis, round(basis.mean_gap_days, 3))


async def memory_map(call: ViewCall) -> MemoryMap:
    """Per-layer counts and strength histograms over every memory; one page of the table."""
    sort = call.choice("sort", sm.SORTS, "weakest") or "weakest"
    layer = call.text("layer", 64)
    page = call.page()
    store = await call.store()
    la = call.state.loss_aversion
    now = clock.now()
    reading = await _reading(call, store)
    order = await asyncio.to_thread(reading.order, sort, layer)
    chosen = order[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
    strengths = {reading.ids[i]: reading.strengths[i] for i in chosen}
    found = await reads.memories_by_id(store.db.reader, call.tenant, list(strengths))
    shown = [found[i] for i in strengths if i in found]
    basis = await _basis(store, la)
    table = [
        MapRow(
            id=mem.id,
            layer=mem.layer,
            content=snippet(mem.content),
            strength=round(strengths[mem.id], 4),
            retrieval_count=mem.retrieval_count,
            good=mem.outcome_positive,
            bad=mem.outcome_negative,
            pinned=mem.pinned,
            superseded=mem.superseded_by is not None,
            created=mem.created,
            last_retrieved=mem.last_retrieved,
            days_to_dormant=_rounded(sm.days_to_dormant(mem, now, basis)),
            protected=sm.protected_reason(mem),
        )
        for mem in shown
    ]
    return MemoryMap(
        store=store.root,
        total=sum(f.count for f in reading.figures),
        layers=list(reading.figures),
        bins=sm.BINS,
        dormant_below=sm.DORMANT_BELOW,
        at_risk_below=st.AT_RISK_BELOW,
        sort=sort,
        layer=layer,
        page=page,
        pages=pages(len(order)),
        rows=table,
        curves=_curves(shown[:CURVES_SHOWN], now, basis),
    )


def _rounded(days: float | None) -> float | None:
    return None if days is None else round(days, 1)


async def curves(call: ViewCall) -> Curves:
    """Decay curves of the memories named by `ids` (comma-separated, at most 12)."""
    ids = [i for i in (call.text("ids", 2000) or "").split(",") if i][:MAX_CURVES]
    store = await call.store()
    found = await reads.memories_by_id(store.db.reader, call.tenant, ids)
    return _curves(
        [found[i] for i in ids if i in found], clock.now(), await _basis(store, call.state.loss_aversion)
    )


class Listed(msgspec.Struct):
    id: str
    layer: str
    content: str
    created: str
    retrieval_count: int
    tags: list[str]
    when: str  # pinned: created; dormant: when it went dormant
    reason: str | None = None
    strength: float | None = None
    command: str | None = None  # dormant: the restore command


class Page(msgspec.Struct):
    store: str
    count: int
    page: int
    pages: int
    rows: list[Listed]
    per_day: list[tuple[str, int]] = []


def _listed(mem: Memory, when: str, **extra: Any) -> Listed:
    return Listed(
        id=mem.id,
        layer=mem.layer,
        content=snippet(mem.content),
        created=mem.created,
        retrieval_count=mem.retrieval_count,
        tags=mem.tags,
        when=when,
        **extra,
    )


async def pinned(call: ViewCall) -> Page:
    """Pinned memories, newest first, a page at a time."""
    page = call.page()
    store = await call.store()
    count, rows = await reads.pinned_page(store.db.reader, call.tenant, PAGE_SIZE, page * PAGE_SIZE)
    return Page(store.root, count, page, pages(count), [_listed(mem, mem.created) for mem in rows])


def _parked_strength(memory: Memory, dormant_at: str) -> float | None:
    return round(memory.strength_at(clock.parse_iso(dormant_at)).strength, 4) if dormant_at else None


async def dormant(call: ViewCall) -> Page:
    """The dormant store: how many went dormant each day, and a page of them, newest first."""
    page = call.page()
    store = await call.store()
    reader = store.db.reader
    count = await count_dormant(reader, call.tenant)
    rows = await reads.dormant_page(reader, call.tenant, PAGE_SIZE, page * PAGE_SIZE)
    listed = [
        _listed(
            d.memory,
            d.dormant_at,
            reason=d.reason,
            # Its live strength when it was parked: the stored column is a cache that sleep may not
            # have refreshed before moving it.
            strength=_parked_strength(d.memory, d.dormant_at),
            command=command(store, "dormant", "restore", d.memory.id),
        )
        for d in rows
    ]
    per_day = await reads.dormant_per_day(reader, call.tenant)
    return Page(store.root, count, page, pages(count), listed, per_day)
