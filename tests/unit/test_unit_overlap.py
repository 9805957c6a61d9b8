"""find_overlapping agrees with the exhaustive textOverlap rule on a real store."""

from __future__ import annotations

import random
from collections.abc import Callable

from hippod.model.memory import Memory
from hippod.model.tokenize import text_overlap
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories
from hippod.store.sqlite.overlap import find_overlapping

WORDS = "alpha beta gamma delta deploy deployed cache redis build broke tests ci lint tips_10y".split()


async def test_matches_the_exhaustive_rule(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    rng = random.Random(7)
    stored = [" ".join(rng.choices(WORDS, k=rng.randint(2, 7))) for _ in range(120)]
    async with database.transaction() as conn:
        for text in stored:
            assert await memories.insert(conn, make_memory(text))
    for _ in range(150):
        probe = " ".join(rng.choices(WORDS, k=rng.randint(2, 7)))
        for threshold, chars in ((0.7, None), (0.6, 12)):
            found = await find_overlapping(database.reader, "default", probe, threshold, chars=chars)

            def cut(text: str, chars: int | None = chars) -> str:
                return text if chars is None else text[:chars]

            expected = any(text_overlap(cut(probe), cut(text)) > threshold for text in stored)
            assert (found is not None) == expected, (probe, threshold)
            if found is not None:
                assert text_overlap(cut(probe), cut(found.content)) > threshold


async def test_superseded_and_other_tenants_are_ignored(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    async with database.transaction() as conn:
        await memories.insert(conn, make_memory("redis cache broke the deploy", tenant_id="other"))
        await memories.insert(conn, make_memory("redis cache broke the build", superseded_by="mem_x"))
    assert await find_overlapping(database.reader, "default", "redis cache broke the deploy", 0.7) is None
    assert await find_overlapping(database.reader, "other", "redis cache broke the deploy", 0.7) is not None
