"""The in-memory vector index behind recall's candidates by meaning (embed/nearest.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from hippod.embed import nearest, vectors
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import embeddings, memories

DIM = 4


def _blob(*values: float) -> bytes:
    return vectors.to_blob(vectors.normalise(np.array([values], dtype=np.float32))[0])


def _index(rows: list[tuple[str, bytes]]) -> nearest.NearestIndex:
    index = nearest.NearestIndex("m", DIM)
    index.put(rows)
    return index


def test_nearest_first_from_the_floor_up_less_the_skipped() -> None:
    index = _index(
        [
            ("far", _blob(0, 0, 0, 1)),
            ("near", _blob(1, 0.1, 0, 0)),
            ("nearest", _blob(1, 0, 0, 0)),
            ("middle", _blob(1, 1, 0, 0)),
        ]
    )
    query = _blob(1, 0, 0, 0)
    assert index.nearest(query, 0.5, set()) == ["nearest", "near", "middle"]
    assert index.nearest(query, 0.5, {"near"}) == ["nearest", "middle"]
    assert index.nearest(query, 0.5, set(), limit=1) == ["nearest"]
    assert index.nearest(query, 0.999, set()) == ["nearest"]
    # The skipped do not use up the limit.
    assert index.nearest(query, 0.0, {"nearest", "near"}, limit=1) == ["middle"]


def test_ties_go_to_the_memory_stored_first() -> None:
    index = _index([(f"m{i}", _blob(1, 0, 0, 0)) for i in range(6)])
    assert index.nearest(_blob(1, 0, 0, 0), 0.5, set(), limit=3) == ["m0", "m1", "m2"]


def test_a_new_vector_for_a_known_memory_replaces_its_old_one() -> None:
    index = _index([("a", _blob(1, 0, 0, 0)), ("b", _blob(0, 1, 0, 0))])
    index.put([("a", _blob(0, 0, 1, 0))])
    assert len(index) == 2
    assert index.nearest(_blob(0, 0, 1, 0), 0.5, set()) == ["a"]
    assert index.nearest(_blob(1, 0, 0, 0), 0.5, set()) == []


def test_wrongly_sized_vectors_and_queries_are_left_out() -> None:
    index = _index([("a", _blob(1, 0, 0, 0)), ("short", b"\x00" * 8)])
    assert len(index) == 1
    assert index.nearest(b"\x00" * 8, 0.0, set()) == []


def test_past_the_scan_limit_the_index_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nearest, "SCAN_MAX", 3)
    index = _index([("a", _blob(1, 0, 0, 0)), ("b", _blob(0, 1, 0, 0))])
    index.put([("c", _blob(0, 0, 1, 0)), ("d", _blob(0, 0, 0, 1))])
    assert index.too_large and len(index) == 0
    index.put([("e", _blob(1, 0, 0, 0))])
    assert len(index) == 0 and index.nearest(_blob(1, 0, 0, 0), 0.0, set()) == []


async def _stored(database: dbmod.Database, make_memory: Any, blobs: list[bytes]) -> list[str]:
    made = [make_memory(f"memory {i}") for i in range(len(blobs))]
    async with database.transaction() as conn:
        for memory in made:
            assert await memories.insert(conn, memory)
        await embeddings.upsert(conn, "m", DIM, [(m.id, b, "d") for m, b in zip(made, blobs, strict=True)])
    return [m.id for m in made]


async def test_load_reads_the_store_and_keeps_what_was_put_meanwhile(
    database: dbmod.Database, make_memory: Any
) -> None:
    first, second = await _stored(database, make_memory, [_blob(1, 0, 0, 0), _blob(0, 1, 0, 0)])
    index = nearest.NearestIndex("m", DIM)
    # Put before the load finished: newer than what the table held when it was read.
    index.put([(first, _blob(0, 0, 1, 0))])
    await index.load(database.reader)
    assert index.loaded and len(index) == 2
    assert index.nearest(_blob(0, 0, 1, 0), 0.5, set()) == [first]
    assert index.nearest(_blob(0, 1, 0, 0), 0.5, set()) == [second]
    # Another model's vectors are not this index's.
    other = nearest.NearestIndex("other", DIM)
    await other.load(database.reader)
    assert len(other) == 0 and not other.too_large


async def test_recalls_arriving_together_read_the_vectors_once(
    database: dbmod.Database, make_memory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _stored(database, make_memory, [_blob(1, 0, 0, 0), _blob(0, 1, 0, 0)])
    pages: list[int] = []
    real_page = embeddings.vectors_page

    async def counted(*args: Any) -> Any:
        pages.append(1)
        return await real_page(*args)

    monkeypatch.setattr(nearest.embeddings, "vectors_page", counted)
    index = nearest.NearestIndex("m", DIM)
    await asyncio.gather(*(index.ensure_loaded(database.reader) for _ in range(3)))
    assert index.loaded and len(index) == 2
    assert len(pages) == 2  # one page of vectors, one empty page that ends the read: one load


async def test_a_store_past_the_scan_limit_is_not_read(
    database: dbmod.Database, make_memory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _stored(database, make_memory, [_blob(1, 0, 0, 0), _blob(0, 1, 0, 0), _blob(0, 0, 1, 0)])
    monkeypatch.setattr(nearest, "SCAN_MAX", 2)
    index = nearest.NearestIndex("m", DIM)
    await index.load(database.reader)
    assert index.loaded and index.too_large and len(index) == 0


def _unit_rows(count: int, dim: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, dim)).astype(np.float32)
    return vectors.normalise(rows)


def test_vectors_are_held_as_int8_with_cosines_close_to_the_float_ones() -> None:
    rows = _unit_rows(3000, 384, 1)
    index = nearest.NearestIndex("m", 384)
    index.put([(f"m{i}", vectors.to_blob(row)) for i, row in enumerate(rows)])
    # A byte a dimension (and a scale a row), with room to grow of at most double.
    assert 3000 * 384 <= index.nbytes() <= 2 * 3000 * (384 + 4)
    query = vectors.normalise(rows[7:8] + 0.5 * rows[8:9])[0]
    exact = rows @ query
    assert np.abs(index.cosines(vectors.to_blob(query)) - exact).max() < 0.01
    best = [f"m{i}" for i in np.argsort(-exact)[:2]]
    assert index.nearest(vectors.to_blob(query), 0.3, set(), limit=2) == best


@pytest.mark.long
async def test_a_store_past_twenty_thousand_vectors_is_searched(
    database: dbmod.Database, make_memory: Any
) -> None:
    count, dim = 20_500, 16
    rows = _unit_rows(count, dim, 2)
    made = [make_memory(f"memory {i}") for i in range(count)]
    async with database.transaction() as conn:
        for memory in made:
            assert await memories.insert(conn, memory)
        await embeddings.upsert(
            conn, "m", dim, [(mm.id, vectors.to_blob(row), "d") for mm, row in zip(made, rows, strict=True)]
        )
    index = nearest.NearestIndex("m", dim)
    await index.load(database.reader)
    assert index.loaded and not index.too_large and len(index) == count
    # The last vector written, read from the table's last page, is found by its own direction.
    assert index.nearest(vectors.to_blob(rows[-1]), 0.9, set(), limit=1) == [made[-1].id]
    # A put after the load adds to the same matrix.
    extra = make_memory("one more")
    index.put([(extra.id, vectors.to_blob(rows[0]))])
    assert len(index) == count + 1
    assert set(index.nearest(vectors.to_blob(rows[0]), 0.99, set())) == {made[0].id, extra.id}
