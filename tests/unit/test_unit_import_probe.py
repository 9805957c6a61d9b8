"""The import's duplicate check against the store through the FTS index (store/sqlite/import_probe.py) gives
the verdicts of the full-index path and of the exhaustive textOverlap rule, on a real SQLite store."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from hippod.ingest.import_core import DUPLICATE_ABOVE, Verdict, judge, token_set
from hippod.model.digest import content_digest
from hippod.model.memory import Memory
from hippod.model.tokenize import text_overlap
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories
from hippod.store.sqlite.import_probe import StoredProbe

# Words with shared stems (deploy, deploys, deployed...), case variants, and words that only occur
# inside longer ones (auth in authentication, config in configuration), so that stems, case and
# prefixes all meet the prefix filter.
WORDS = (
    "deploy deploys deployed deploying deployment Deploy DEPLOY cache caches cached Cache auth "
    "authentication authenticate config configuration configure redis postgres build builds "
    "broke broken test tests tested lint linter ci pipeline pipelines tips_10y x86 v2 日本語 中文"
).split()


def _text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(low, high)))


def _mutate(rng: random.Random, text: str) -> str:
    """A near-copy: a word or two swapped, dropped or added, or the case changed."""
    words = text.split()
    for _ in range(rng.randint(1, 2)):
        move = rng.randrange(4)
        if move == 0 and len(words) > 1:
            words.pop(rng.randrange(len(words)))
        elif move == 1:
            words.insert(rng.randrange(len(words) + 1), rng.choice(WORDS))
        elif move == 2:
            words[rng.randrange(len(words))] = rng.choice(WORDS)
        else:
            words = [w.upper() if rng.random() < 0.5 else w.lower() for w in words]
    return " ".join(words)


def _reference(
    texts: Sequence[str], live: Sequence[str], rejected: set[str], check: Sequence[bool]
) -> list[Verdict]:
    """The rule itself, pair by pair: a duplicate of a live memory or of an earlier accepted text."""
    accepted = list(live)
    out = []
    for text, checked in zip(texts, check, strict=True):
        if checked and any(text_overlap(text, other) > DUPLICATE_ABOVE for other in accepted):
            out.append(Verdict.DUPLICATE)
        elif content_digest(text) in rejected:
            out.append(Verdict.REJECTED)
        else:
            if checked:
                accepted.append(text)
            out.append(Verdict.NEW)
    return out


def _verdicts(
    path: str, texts: list[str], rejected: set[str], check: list[bool], *, fts5: bool
) -> list[Verdict]:
    with StoredProbe(path, "default", DUPLICATE_ABOVE, fts5=fts5) as probe:
        digests = [content_digest(t) for t in texts]
        return judge(texts, digests, probe.duplicates, rejected, check=check)


async def test_verdicts_match_the_full_index_and_the_rule(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    rng = random.Random(18)
    live = [_text(rng, 1, 8) for _ in range(150)]
    live += [_text(rng, 60, 160) for _ in range(15)]  # long texts
    live += ["!!! --- ???", "a b c d e"]  # no tokens at all
    # Another tenant's, superseded and archived memories never make a chunk a duplicate.
    hidden = [_text(rng, 3, 8) for _ in range(30)]
    async with database.transaction() as conn:
        for text in live:
            assert await memories.insert(conn, make_memory(text))
        for n, text in enumerate(hidden):
            fields = [{"tenant_id": "other"}, {"superseded_by": "mem_new"}, {"kind": "archived"}][n % 3]
            assert await memories.insert(conn, make_memory(text, **fields))
    texts = [_mutate(rng, rng.choice(live)) for _ in range(250)]
    texts += [rng.choice(hidden) for _ in range(30)]
    texts += [_text(rng, 1, 8) for _ in range(150)]
    texts += [_mutate(rng, t) for t in texts[-40:]]  # near-copies within the run
    texts += ["--- !!! ---", "deploy", "authentication configuration"]
    rng.shuffle(texts)
    rejected = {content_digest(t) for t in rng.sample(texts, 20)}
    check = [rng.random() > 0.1 for _ in texts]  # superseded records of an export are not checked

    expected = _reference(texts, live, rejected, check)
    assert _verdicts(database.path, texts, rejected, check, fts5=True) == expected
    assert _verdicts(database.path, texts, rejected, check, fts5=False) == expected
    # The store, not only the run, made duplicates, and some texts only just missed.
    with StoredProbe(database.path, "default", DUPLICATE_ABOVE) as probe:
        sets = [token_set(t) for t in texts]
        found = probe.duplicates(sets, [i for i, c in enumerate(check) if c])
    assert 100 < len(found) < len(texts) - 100
    assert expected.count(Verdict.NEW) > 100
    close = [t for t in texts if 0.6 < max(text_overlap(t, s) for s in live) <= DUPLICATE_ABOVE]
    assert close


async def test_words_no_other_memory_holds_and_the_threshold_itself(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    seven = "one two three four five six seven"
    async with database.transaction() as conn:
        await memories.insert(conn, make_memory("zanzibar quokka marmalade"))
        await memories.insert(conn, make_memory(seven + " eight nine"))
    chunks = [
        "Zanzibar QUOKKA marmalade",  # every word in one stored memory only
        "zanzibar quokka",  # 2 / 3
        seven + " ten",  # 7 / 10: exactly 0.7, not above it
        seven + " eight",  # 8 / 9
    ]
    with StoredProbe(database.path, "default", DUPLICATE_ABOVE) as probe:
        assert probe.duplicates([token_set(c) for c in chunks], [0, 1, 2, 3]) == {0, 3}


async def test_other_tenants_superseded_and_archived_are_not_the_store(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    text = "redis cache broke the deploy on friday"
    async with database.transaction() as conn:
        await memories.insert(conn, make_memory(text, tenant_id="other"))
        await memories.insert(conn, make_memory(text + " night", superseded_by="mem_x"))
        await memories.insert(conn, make_memory(text + " evening", kind="archived"))
        await memories.insert(conn, make_memory("!!! ---"))
    with StoredProbe(database.path, "default", DUPLICATE_ABOVE) as probe:
        assert probe.duplicates([token_set(text), token_set("??? ...")], [0, 1]) == {1}
    with StoredProbe(database.path, "other", DUPLICATE_ABOVE) as probe:
        assert probe.duplicates([token_set(text.upper()), token_set("??? ...")], [0, 1]) == {0}
        assert probe.top == 4
