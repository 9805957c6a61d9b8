"""The value digest (memory-model.md §12): normalisation, legacy tombstones, the digest migration, and
cutting a rejected value out of a longer text."""

from __future__ import annotations

import hashlib
import sqlite3
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from hippod.model import passages
from hippod.model.digest import content_digest, digests, legacy_normalize, normalize, refused
from hippod.model.memory import Memory
from hippod.store.records import Rejection
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories, migrations, rejections

BASE = "deploy the billing worker"

# The spec's rule (NFC, lowercase, whitespace collapsed, trimmed) and the spellings that must
# reach the same value as well.
SAME_VALUE = [
    "  Deploy   the BILLING worker ",
    "Deploy the billing\nworker",
    "Deploy the billing worker.",
    "Deploy the billing worker!?",
    "Deploy the billing worker ...",
    "Deploy the billing\u200b worker",  # zero-width space
    "Deploy the bil\u00adling worker",  # soft hyphen
    "\ufeffDeploy the billing worker",  # byte-order mark
    "Deploy the \u200ebilling worker",  # left-to-right mark
    "Deploy the ｂｉｌｌｉｎｇ worker",  # full-width letters (NFKC)
    "Deploy\u00a0the billing\u3000worker",  # no-break and ideographic spaces
]
OTHER_VALUE = [
    "Deploy the billing worker now",
    "Deploy the billing-worker",
    ".Deploy the billing worker",  # leading punctuation stays
    "Deploy the billing workers",
]


@pytest.mark.parametrize("spelling", SAME_VALUE)
def test_spellings_of_one_value_share_its_digest(spelling: str) -> None:
    assert normalize(spelling) == BASE
    assert content_digest(spelling) == hashlib.sha256(BASE.encode()).hexdigest()


@pytest.mark.parametrize("other", OTHER_VALUE)
def test_other_values_keep_their_own_digest(other: str) -> None:
    assert content_digest(other) != content_digest(BASE)


def test_composed_and_decomposed_accents_are_one_value() -> None:
    composed = "Café déjà vu"
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed and content_digest(composed) == content_digest(decomposed)
    assert normalize(decomposed) == "café déjà vu"


def test_punctuation_inside_and_punctuation_only_texts_stay() -> None:
    assert normalize("Use pnpm (v9.1), not npm.") == "use pnpm (v9.1), not npm"
    assert normalize("...") == "..." and content_digest("...") != content_digest("?!")


def test_the_legacy_digest_is_the_old_rule() -> None:
    text = "  Use the LEGACY endpoint. "
    current, legacy = digests(text)
    assert current == content_digest(text)
    assert legacy == hashlib.sha256(b"use the legacy endpoint.").hexdigest()
    assert legacy_normalize(text) == "use the legacy endpoint."
    assert refused(text, {legacy}) and refused("use the legacy endpoint.", {legacy})
    assert not refused("use the legacy endpoint!", {legacy})
    assert refused("use the legacy endpoint!", {current})


async def _tombstone(database: dbmod.Database, digest: str) -> None:
    tombstone = Rejection(digest, "wrong", "cli:0", "2026-01-01T00:00:00.000Z", None, 10)
    async with database.transaction() as conn:
        assert await rejections.add(conn, "default", tombstone)


async def test_a_legacy_tombstone_still_refuses_its_text(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    # Written before the current rule: sha256 of "keep the cache warm." (the full stop kept).
    await _tombstone(database, hashlib.sha256(b"keep the cache warm.").hexdigest())
    async with database.transaction() as conn:
        assert await memories.insert(conn, make_memory("Keep the cache warm.")) is False
        assert await rejections.refuses(conn, "default", "keep the   cache warm.")
        assert await memories.insert(conn, make_memory("Keep the cache cold")) is True


async def test_reject_finds_copies_stored_in_another_spelling(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    stored = [make_memory(s) for s in SAME_VALUE[:6]]
    async with database.transaction() as conn:
        for memory in stored:
            assert await memories.insert(conn, memory)
    stamp = "2026-01-01T00:00:00.000Z"
    tombstone = Rejection(content_digest(BASE), "wrong", "cli:0", stamp, None, len(BASE))
    async with database.transaction() as conn:
        deleted, archived, dormant = await rejections.reject_copies(conn, "default", tombstone, BASE)
    assert sorted(deleted) == sorted(m.id for m in stored) and archived == dormant == []
    assert await memories.live(database.reader, "default") == []


def test_the_digest_migration_recomputes_stored_digests(
    old_store: Callable[[int], sqlite3.Connection],
) -> None:
    # A store at schema 8, whose rows carry digests made by the old rule.
    conn = old_store(8)
    columns = "id, content, created, valid_from, last_retrieved, half_life_days, updated_at, "
    columns += "content_digest, fts_content, fts_tags"
    for memory_id, content in (("mem_a", "Rotate the keys."), ("mem_b", "plain text")):
        old = hashlib.sha256(legacy_normalize(content).encode()).hexdigest()
        conn.execute(
            f"INSERT INTO memories ({columns}) VALUES (?, ?, 'x', 'x', 'x', 365, 'x', ?, '', '')",
            (memory_id, content, old),
        )
    conn.execute(
        f"INSERT INTO dormant_memories ({columns}) "
        "VALUES ('mem_c', 'Faded\u200b note.', 'x', 'x', 'x', 365, 'x', 'old', '', '')"
    )
    assert migrations.migrate(conn) == migrations.SCHEMA_VERSION
    rows = dict(conn.execute("SELECT id, content_digest FROM memories").fetchall())
    assert rows == {"mem_a": content_digest("rotate the keys"), "mem_b": content_digest("plain text")}
    (dormant,) = conn.execute("SELECT content_digest FROM dormant_memories").fetchone()
    assert dormant == content_digest("faded note")


def test_cut_removes_every_spelling_of_the_value_from_a_summary() -> None:
    summary = (
        "We ported the module.\n\n## Memories for hippo\n\n- Deploy the billing worker.\n"
        "- The queue drains every 5 minutes\n- deploy THE billing\u200b worker\n\nDone."
    )
    cut = passages.cut(summary, BASE)
    assert cut is not None
    assert cut.count(passages.CUT_MARK) == 2 and "The queue drains every 5 minutes" in cut
    assert not passages.holds(cut, BASE) and "billing" not in cut


def test_cut_leaves_a_longer_word_alone() -> None:
    text = "Deploy the billing workers first"
    assert not passages.holds(text, BASE) and passages.cut(text, BASE) == text
    decomposed = unicodedata.normalize("NFD", "Note: café déjà vu, then lunch")
    cut = passages.cut(decomposed, "Café déjà vu")
    assert cut == "Note: [rejected], then lunch"


async def test_deleted_rows_leave_no_bytes_in_the_file(
    database: dbmod.Database, make_memory: Callable[..., Memory]
) -> None:
    # Builds differ in their default (Debian's zeroes deleted rows, python.org's does not): the
    # store sets it on every connection.
    for conn in (database.writer, database.reader):
        assert list(await conn.execute_fetchall("PRAGMA secure_delete")) == [(1,)]
    fillers = [make_memory(f"filler memory number {i} " * 4) for i in range(40)]
    doomed = make_memory("The doomed value zq7 must not linger")
    async with database.transaction() as conn:
        for memory in [*fillers, doomed]:
            assert await memories.insert(conn, memory)
    async with database.transaction() as conn:
        assert await memories.delete(conn, "default", doomed.id)
    await database.writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    files = [Path(database.path), Path(database.path + "-wal")]
    assert sum(p.read_bytes().count(b"doomed value zq7") for p in files if p.exists()) == 0
