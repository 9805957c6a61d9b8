"""The near-copy index: MinHash band keys (hippod.model.minhash), the tables and triggers that keep
it (migration 21), the catch-up that hashes what waits, and an import's probe through it, which
must refuse the same near-copies as the full-text probe it replaces."""

from __future__ import annotations

import dataclasses
import random
import zlib
from collections.abc import Callable
from typing import Any

from hippod.ingest.import_core import DUPLICATE_ABOVE
from hippod.model import minhash
from hippod.model.memory import Memory
from hippod.model.tokenize import tokenize
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories, near_index
from hippod.store.sqlite.import_probe import StoredProbe

WORDS = [
    f"{stem}{n}" for stem in ("deploy", "cache", "retry", "schema", "token", "queue") for n in range(200)
]


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b)


def _texts(rng: random.Random, count: int) -> list[str]:
    return [" ".join(rng.sample(WORDS, rng.randint(8, 40))) for _ in range(count)]


def _edited(rng: random.Random, text: str, least: float) -> str:
    """The text with a word or more swapped for others, its overlap with the original above `least`."""
    words = text.split()
    while True:
        edited = list(words)
        for _ in range(rng.randint(1, 3)):
            edited[rng.randrange(len(edited))] = rng.choice(WORDS)
        made = " ".join(edited)
        if _jaccard(frozenset(tokenize(made)), frozenset(tokenize(text))) > least:
            return made


def test_keys_are_fixed_across_processes_and_tenants_apart() -> None:
    tokens = frozenset(tokenize("the deploy script retries the cache warmup twice"))
    keys = minhash.band_keys("default", [tokens])[0]
    assert len(keys) == minhash.BANDS == len(set(keys))
    # Each band's key carries its band number, so two bands never share one.
    assert [key >> minhash.HASH_BITS for key in keys] == list(range(minhash.BANDS))
    # The token hash is the stable CRC-32, not Python's per-process hash: keys stored by one daemon
    # are found by the next.
    assert minhash.token_hash("deploy") == zlib.crc32(b"deploy")
    assert minhash.band_keys("default", [tokens])[0] == keys
    assert not set(minhash.band_keys("other", [tokens])[0]) & set(keys)
    assert minhash.band_keys("default", [frozenset()]) == [[]]
    # The values themselves, as stores already hold them: a change here needs a migration.
    assert keys[:3] == [639429271909, 1504356462268, 2359902204614]
    assert keys[-1] == 34741588454767


def test_keys_do_not_depend_on_how_sets_are_grouped_for_hashing() -> None:
    rng = random.Random(3)
    sets = [frozenset(tokenize(t)) for t in _texts(rng, 3 * minhash.SETS_AT_ONCE + 5)]
    together = minhash.band_keys("t", sets)
    assert len(minhash._parts(list(range(len(sets))), sets)) > 3
    assert together == [minhash.band_keys("t", [one])[0] for one in sets]


def test_a_batch_keys_come_in_key_order_with_their_rows() -> None:
    rng = random.Random(5)
    texts = _texts(rng, 400)
    rows = [(10 + i, "default" if i % 3 else "other", text) for i, text in enumerate(texts)]
    rows.append((99, "default", None))  # a memory deleted since it was queued: no keys
    rows.append((98, "default", "!!! ..."))  # a text with no tokens: no keys either
    rows.append((1, "default", texts[1]))  # the same keys as row 11: the smaller row first
    expected = sorted(
        (key, row)
        for row, tenant, text in rows
        if text is not None
        for key in minhash.band_keys(tenant, [frozenset(tokenize(text))])[0]
    )
    got = near_index._keys(rows)
    assert got == expected
    assert len(got) > near_index._SLICE  # made in more than one slice
    assert all(type(key) is int and type(row) is int for key, row in got[:5])
    assert near_index._keys([]) == []
    assert near_index._keys([(5, "default", None)]) == []


def test_near_sets_share_a_key_and_unrelated_ones_do_not() -> None:
    rng = random.Random(7)
    originals = [frozenset(tokenize(t)) for t in _texts(rng, 300)]
    near = [frozenset(tokenize(_edited(rng, " ".join(sorted(s)), 0.85))) for s in originals]
    keys = minhash.band_keys("t", originals + near)
    shared = [bool(set(keys[i]) & set(keys[300 + i])) for i in range(300)]
    assert all(shared)
    unrelated = [bool(set(keys[i]) & set(keys[300 + (i + 1) % 300])) for i in range(300)]
    assert sum(unrelated) <= 3


async def _store(database: dbmod.Database, make_memory: Callable[..., Memory], texts: list[str]) -> None:
    async with database.transaction() as conn:
        for text in texts:
            assert await memories.insert(conn, make_memory(text))


async def _waiting(database: dbmod.Database) -> set[int]:
    rows = await database.reader.execute_fetchall("SELECT row FROM near_pending")
    return {int(r[0]) for r in rows}


async def test_triggers_queue_every_new_or_rewritten_memory_and_the_catch_up_hashes_them(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    await _store(database, make_memory, ["the deploy script retries twice", "cache warmup runs at boot"])
    assert len(await _waiting(database)) == 2
    assert await near_index.catch_up(database) == 2
    assert await _waiting(database) == set()
    rows = await database.reader.execute_fetchall("SELECT count(*), count(DISTINCT row) FROM near_keys")
    assert list(next(iter(rows))) == [2 * minhash.BANDS, 2]

    [first] = await memories.get_many(database.reader, [(await _ids(database))[0]])
    async with database.transaction() as conn:
        await memories.update(conn, first)  # the same text: nothing to hash again
    assert await _waiting(database) == set()
    changed = dataclasses.replace(first, content="the deploy script retries three times")
    async with database.transaction() as conn:
        await memories.update(conn, changed)
    assert len(await _waiting(database)) == 1
    async with database.transaction() as conn:
        await conn.execute("DELETE FROM memories WHERE id = ?", (first.id,))
    assert await _waiting(database) == set()


async def _ids(database: dbmod.Database) -> list[str]:
    rows = await database.reader.execute_fetchall("SELECT id FROM memories ORDER BY rowid")
    return [str(r[0]) for r in rows]


def _probe(path: str, chunks: list[frozenset[str]], *, index: bool) -> set[int]:
    with StoredProbe(path, "default", DUPLICATE_ABOVE) as probe:
        if index:
            assert probe._near is not None
        else:
            probe._near = None  # the full-text probe, as before the index
        return probe.duplicates(chunks, list(range(len(chunks))))


async def test_the_index_refuses_the_same_near_copies_as_the_full_text_probe(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    rng = random.Random(11)
    stored = _texts(rng, 1500)
    await _store(database, make_memory, stored)
    # Near-copies of stored memories well above the threshold, texts near a stored one but below
    # it, and new texts; some stored memories are still waiting for their keys when the import plans.
    near = [_edited(rng, text, 0.8) for text in rng.sample(stored[:1200], 200)]
    fresh = _texts(rng, 200)
    late = _texts(rng, 20)
    await near_index.catch_up(database)
    await _store(database, make_memory, late)
    copies_of_late = [_edited(rng, text, 0.8) for text in late]
    texts = near + fresh + copies_of_late + ["", stored[0]]
    chunks = [frozenset(tokenize(t)) for t in texts]
    by_index = _probe(database.path, chunks, index=True)
    by_words = _probe(database.path, chunks, index=False)
    assert by_index == by_words
    assert set(range(200)) <= by_index and not by_index & set(range(200, 400))
    assert set(range(400, 420)) <= by_index and len(texts) - 1 in by_index


async def test_levels_merge_in_key_order_and_lookups_find_the_same(
    database: dbmod.Database, make_memory: Callable[..., Memory], monkeypatch: Any
) -> None:
    rng = random.Random(3)
    stored = _texts(rng, 300)
    await _store(database, make_memory, stored)
    await near_index.catch_up(database)
    chunks = [frozenset(tokenize(_edited(rng, text, 0.8))) for text in stored[:100]] + [
        frozenset(tokenize(t)) for t in _texts(rng, 100)
    ]
    before = _probe(database.path, chunks, index=True)
    assert await near_index.levels(database.reader) == {0: 300 * minhash.BANDS}
    # Small levels: 300 memories' keys fill level 0 nine times over and level 1 past its size too.
    monkeypatch.setattr(near_index, "LEVEL0_KEYS", 800)
    monkeypatch.setattr(near_index, "MERGE_SLICE", 500)
    assert await near_index.compact(database) > 0
    held = await near_index.levels(database.reader)
    assert all(keys <= near_index.capacity(level) for level, keys in held.items())
    assert held[0] == held[1] == 0 and sum(held.values()) == 300 * minhash.BANDS
    rows = await database.reader.execute_fetchall("SELECT level, count(*) FROM near_keys GROUP BY level")
    assert {int(level): int(n) for level, n in rows} == {k: v for k, v in held.items() if v}
    assert _probe(database.path, chunks, index=True) == before == set(range(100))


async def test_an_index_with_too_many_waiting_is_not_used(
    database: dbmod.Database, make_memory: Callable[..., Memory], monkeypatch: Any
) -> None:
    await _store(database, make_memory, ["the deploy script retries twice", "cache warmup runs at boot"])
    monkeypatch.setattr("hippod.store.sqlite.near_lookup.WAITING_HASHED", 1)
    chunk = frozenset(tokenize("the deploy script retries twice"))
    with StoredProbe(database.path, "default", DUPLICATE_ABOVE) as probe:
        assert probe._near is None
        assert probe.duplicates([chunk], [0]) == {0}


def test_a_long_text_is_hashed_a_slice_of_tokens_at_a_time(monkeypatch: Any) -> None:
    tokens = frozenset(f"word{n}" for n in range(500))
    whole = minhash.band_keys("t", [tokens])
    monkeypatch.setattr(minhash, "TOKENS_AT_ONCE", 64)
    assert minhash.band_keys("t", [tokens]) == whole
    assert minhash._parts([0, 1, 2], [tokens, frozenset({"a"}), frozenset({"b"})]) == [[0], [1, 2]]


async def test_an_import_leaves_a_large_backlog_to_the_background(
    database: dbmod.Database, make_memory: Callable[..., Memory], monkeypatch: Any
) -> None:
    await _store(database, make_memory, ["the deploy script retries twice", "cache warmup runs at boot"])
    monkeypatch.setattr(near_index, "WAITING_HASHED", 1)
    await near_index.before_import(database)
    assert len(await _waiting(database)) == 2
    monkeypatch.setattr(near_index, "WAITING_HASHED", 2)
    await near_index.before_import(database)
    assert await _waiting(database) == set()
