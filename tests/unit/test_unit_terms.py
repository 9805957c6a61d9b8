"""Index terms: stemmed tokens for the index and BM25, and the query's terms without function words."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from hippod.model.terms import TERMS_VERSION, fts_columns, query_terms, stem, terms
from hippod.model.tokenize import tokenize
from hippod.store.sqlite import prepare


def test_inflections_share_a_term() -> None:
    assert stem("deployments") == stem("deployed") == stem("deploying") == "deploy"
    assert terms("Caches were cached") == [stem("caches"), "were", stem("cached")]


def test_tokens_that_are_not_plain_words_pass_unchanged() -> None:
    for token in ("tips_10y", "v9", "x86", "café", "数据", "東京"):
        assert stem(token) == token
    assert terms("数据管道缓存") == tokenize("数据管道缓存")


def test_terms_keep_order_and_repeats() -> None:
    assert terms("deploy deploys deploy") == ["deploy", "deploy", "deploy"]


def test_query_terms_leave_out_function_words() -> None:
    assert query_terms("When did the nightly exports fail?") == [stem("nightly"), "export", "fail"]


def test_query_terms_leave_out_what_is_left_of_contractions() -> None:
    # The tokenizer splits "I've" into "ve" and "didn't" into "didn"; "won" is a word of its own.
    assert query_terms("I've tried, but the build didn't pass") == ["tri", "build", "pass"]
    assert query_terms("who won the award") == ["won", "award"]


def test_query_of_only_function_words_keeps_them() -> None:
    assert query_terms("what is this") == terms("what is this")


def test_fts_columns_are_space_joined_terms() -> None:
    content, tags = fts_columns("Deployments failed", ["error", "path:etl"])
    assert content.split() == terms("Deployments failed")
    assert tags.split() == terms("error path:etl")


def test_store_reindexes_when_the_terms_version_changes(tmp_path: Path) -> None:
    path = str(tmp_path / "hippo.db")
    prepare.prepare(path)
    conn = sqlite3.connect(path)
    # A row indexed by an older mapping: unstemmed text, and an older terms version.
    columns = "id, content, created, valid_from, last_retrieved, half_life_days, tags"
    conn.execute(
        f"INSERT INTO memories ({columns}, updated_at, content_digest, fts_content, fts_tags) "
        "VALUES ('mem_000000000001', 'Deployments failed', 't', 't', 't', 365, ?, 't', 'd', "
        "'deployments failed', 'error')",
        (json.dumps(["error"]),),
    )
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'terms_version'")
    conn.commit()
    conn.close()

    prepare.prepare(path)

    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT fts_content, fts_tags FROM memories").fetchone()
        assert row == fts_columns("Deployments failed", ["error"])
        version = conn.execute("SELECT value FROM meta WHERE key = 'terms_version'").fetchone()[0]
        assert version == str(TERMS_VERSION)
        hits = conn.execute("SELECT id FROM memories_fts WHERE memories_fts MATCH 'deploy'").fetchall()
        assert hits == [("mem_000000000001",)]
    finally:
        conn.close()
