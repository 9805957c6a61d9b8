"""Optional embeddings: settings, embedded text, vector math, MMR, hybrid scoring (recall.md §5, §10)."""

from __future__ import annotations

import asyncio
import struct
from typing import Any

import numpy as np
import pytest

from hippod.base import clock
from hippod.embed import vectors
from hippod.embed.queue import embed_ids, scan
from hippod.embed.service import embedding_text, settings, text_digest
from hippod.model.tokenize import tokenize
from hippod.recall import score as sc
from hippod.recall.bm25 import bm25_scores, term_idfs
from hippod.recall.proximity import proximity, query_pairs
from hippod.store.config import DEFAULT_COSINE_FLOOR, DEFAULT_MODEL, STORE_DEFAULTS
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import embeddings, memories

NOW = clock.parse_iso("2026-06-01T00:00:00Z")


def _blob(*values: float) -> bytes:
    return vectors.to_blob(vectors.normalise(np.array([values], dtype=np.float32))[0])


# --- settings and text ------------------------------------------------------------------------------


def test_settings_follow_the_spec_defaults() -> None:
    s = settings(STORE_DEFAULTS)
    assert (s.mode, s.model, s.hybrid_weight, s.mmr, s.mmr_lambda) == ("auto", DEFAULT_MODEL, 0.6, True, 0.7)
    assert s.cosine_floor == DEFAULT_COSINE_FLOOR == settings({}).cosine_floor == 0.4


@pytest.mark.parametrize(
    ("enabled", "mode"),
    [
        (True, "required"),
        ("true", "required"),
        (False, "off"),
        ("false", "off"),
        ("auto", "auto"),
        (3, "auto"),
    ],
)
def test_settings_modes(enabled: Any, mode: str) -> None:
    assert settings({"embeddings": {"enabled": enabled}}).mode == mode


def test_the_environment_switch_turns_every_store_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIPPO_EMBEDDINGS", "off")
    assert settings({"embeddings": {"enabled": True}}).mode == "off"
    assert settings(STORE_DEFAULTS).mode == "off"
    monkeypatch.setenv("HIPPO_EMBEDDINGS", "")
    assert settings(STORE_DEFAULTS).mode == "auto"


def test_settings_refuse_unusable_numbers() -> None:
    s = settings({"embeddings": {"hybridWeight": 1.7, "model": ""}, "mmr": {"lambda": "x", "enabled": False}})
    assert (s.hybrid_weight, s.model, s.mmr_lambda, s.mmr) == (0.6, DEFAULT_MODEL, 0.7, False)
    assert settings({"embeddings": {"hybridWeight": 0.25}}).hybrid_weight == 0.25
    assert settings({"embeddings": {"cosineFloor": 0.45}}).cosine_floor == 0.45
    for unusable in (-0.1, 1.5, "0.2", True, None):
        assert settings({"embeddings": {"cosineFloor": unusable}}).cosine_floor == DEFAULT_COSINE_FLOOR


def test_embedding_text_leaves_out_path_tags() -> None:
    assert embedding_text("deploy broke", ["path:src", "error", "path:api", "db"]) == "deploy broke error db"
    assert embedding_text("deploy broke", ["path:src"]) == "deploy broke"


def test_text_digest_changes_with_the_text() -> None:
    assert text_digest("a b") == text_digest("a b")
    assert text_digest("a b") != text_digest("a b c")
    assert len(text_digest("")) == 64


# --- vector math ------------------------------------------------------------------------------------


def test_blobs_are_float32_little_endian() -> None:
    blob = vectors.to_blob(np.array([1.0, -2.5], dtype=np.float32))
    assert blob == struct.pack("<2f", 1.0, -2.5)
    assert vectors.from_blob(blob).tolist() == [1.0, -2.5]


def test_normalise_makes_unit_rows_and_keeps_zero_rows() -> None:
    unit = vectors.normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert unit[0].tolist() == pytest.approx([0.6, 0.8])
    assert unit[1].tolist() == [0.0, 0.0]


def test_cosines_skip_missing_and_wrongly_sized_vectors() -> None:
    query = vectors.normalise(np.array([[1.0, 0.0]]))[0]
    out = vectors.cosines(query, [_blob(1, 0), None, _blob(0, 1), _blob(1, 1), b"\x00" * 12])
    assert out[0] == pytest.approx(1.0)
    assert out[1] is None
    assert out[2] == pytest.approx(0.0)
    assert out[3] == pytest.approx(1 / np.sqrt(2))
    assert out[4] is None


def test_mmr_pushes_a_near_duplicate_below_a_different_item() -> None:
    # 0 and 1 are the same vector; 2 points elsewhere and scores a little lower.
    blobs = [_blob(1, 0, 0), _blob(1, 0, 0), _blob(0, 1, 0)]
    order = vectors.mmr_order([1.0, 0.99, 0.9], blobs, 0.7, 3)
    # Second pick: item 1 gains 0.7 * 0.99 - 0.3 * 1 = 0.393; item 2 gains 0.7 * 0.9 - 0 = 0.63.
    assert order == [0, 2, 1]


def test_mmr_with_lambda_one_keeps_the_score_order() -> None:
    blobs = [_blob(1, 0), _blob(1, 0), None]
    assert vectors.mmr_order([3.0, 2.0, 1.0], blobs, 1.0, 2) == [0, 1, 2]
    assert vectors.mmr_order([], [], 0.7, 2) == []


# --- hybrid score -----------------------------------------------------------------------------------


def test_hybrid_base_is_point_four_bm25_share_plus_point_six_cosine(make_memory: Any) -> None:
    fresh = {"created": clock.iso(NOW), "last_retrieved": clock.iso(NOW)}
    best = make_memory("nightly export times out", **fresh)
    partial = make_memory("nightly backup ran", **fresh)
    meaning = make_memory("the scheduled dump hangs", **fresh)
    unrelated = make_memory("lunch was good", **fresh)
    candidates = [best, partial, meaning, unrelated]
    docs = [tokenize(m.content) for m in candidates]
    query = tokenize("nightly export")
    ctx = sc.ScoreContext(NOW, [])

    results = sc.score_candidates(query, candidates, docs, ctx, cosines=[0.5, None, 0.8, -0.2])

    raw = bm25_scores(query, docs)
    # The best BM25 share is best's with its proximity share ("nightly export" as in the query).
    idfs = term_idfs(query, [{"nightly": 1, "export": 1}, {"nightly": 1}, {}, {}])
    top = raw[0] + proximity(query_pairs(query), docs[0], dict.fromkeys(query, 1.0), idfs)
    by_id = {r.memory.id: r for r in results}
    assert set(by_id) == {best.id, partial.id, meaning.id}  # no BM25 and cosine <= 0: dropped
    assert by_id[best.id].base == pytest.approx(0.4 * 1.0 + 0.6 * 0.5)
    assert by_id[partial.id].base == pytest.approx(0.4 * raw[1] / top)  # no vector: cosine 0
    assert by_id[meaning.id].base == pytest.approx(0.6 * 0.8)  # no term matched, kept on meaning
    assert by_id[meaning.id].cosine == 0.8
    assert by_id[best.id].score == pytest.approx(by_id[best.id].base)  # fresh, full strength: x 1.0


def test_a_memory_without_a_query_term_needs_the_cosine_floor(make_memory: Any) -> None:
    fresh = {"created": clock.iso(NOW), "last_retrieved": clock.iso(NOW)}
    match = make_memory("nightly export times out", **fresh)
    near = make_memory("the scheduled dump hangs", **fresh)
    below = make_memory("lunch was good", **fresh)
    candidates = [match, near, below]
    docs = [tokenize(m.content) for m in candidates]
    ctx = sc.ScoreContext(NOW, [])

    # A term match is returned whatever its cosine; without one, only from the floor up.
    results = sc.score_candidates(
        tokenize("nightly export"), candidates, docs, ctx, cosines=[0.01, 0.3, 0.29], cosine_floor=0.3
    )
    assert [r.memory.id for r in results] == [match.id, near.id]
    assert results[1].base == pytest.approx(0.6 * 0.3)
    # A floor of 0 keeps every positive cosine, as before there was a floor.
    results = sc.score_candidates(
        tokenize("nightly export"), candidates, docs, ctx, cosines=[0.01, 0.3, 0.29]
    )
    assert len(results) == 3


def test_hybrid_weight_comes_from_config(make_memory: Any) -> None:
    memory = make_memory("nightly export", created=clock.iso(NOW), last_retrieved=clock.iso(NOW))
    ctx = sc.ScoreContext(NOW, [])
    [result] = sc.score_candidates(
        ["nightly"], [memory], [tokenize(memory.content)], ctx, cosines=[0.5], hybrid_weight=0.3
    )
    assert result.base == pytest.approx(0.7 + 0.3 * 0.5)


# --- the default model, loaded from the wheel -------------------------------------------------------


@pytest.fixture(scope="module")
def embedder() -> Any:
    # The embed extra is part of the test dependencies, so this import must work.
    from hippod.embed import minilm_model

    return minilm_model.load()


def test_the_model_loads_offline_and_returns_unit_vectors(embedder: Any) -> None:
    blobs = embedder.embed(["the deploy failed on friday", "cats sleep in the sun", ""])
    assert embedder.model == DEFAULT_MODEL and embedder.dim == 384
    assert [len(b) for b in blobs] == [1536, 1536, 1536]
    norms = [float(np.linalg.norm(vectors.from_blob(b))) for b in blobs]
    assert norms == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    cos = embedder.cosines(embedder.query("deployment failure"), blobs[:2])
    assert cos[0] is not None and cos[1] is not None and cos[0] > cos[1] + 0.2


def test_a_paraphrase_is_closer_than_an_unrelated_text(embedder: Any) -> None:
    # What a sentence model adds over word overlap: no word in common, the meaning still matches.
    [vpn, other] = embedder.embed(["The staging deploy needs the VPN", "My cat likes tuna for dinner"])
    query = embedder.query("connect to the private network before shipping to preprod")
    cos = embedder.cosines(query, [vpn, other])
    assert cos[0] is not None and cos[1] is not None and cos[0] > 0.3 > cos[1]


def test_a_text_past_one_window_is_pooled_over_all_of_its_windows(embedder: Any) -> None:
    sentence = "the staging database ran out of disk space during the nightly migration. "
    long_text = sentence * 40  # about 520 tokens: three windows of 256
    assert len(embedder._windows([long_text])) == 3
    [whole, short, other] = embedder.embed([long_text, sentence, "cats sleep in the sun"])
    assert float(np.linalg.norm(vectors.from_blob(whole))) == pytest.approx(1.0, abs=1e-5)
    near = float(vectors.from_blob(whole) @ vectors.from_blob(short))
    far = float(vectors.from_blob(whole) @ vectors.from_blob(other))
    assert near > 0.6 and near > far + 0.4
    # Batched with short texts or alone, a text gets the same vector.
    [alone] = embedder.embed(["cats sleep in the sun"])
    mixed = embedder.embed(["cats sleep in the sun", long_text])
    assert float(vectors.from_blob(alone) @ vectors.from_blob(mixed[0])) == pytest.approx(1.0, abs=1e-5)


def test_a_query_is_embedded_from_its_first_window_alone(embedder: Any) -> None:
    first = "the staging database ran out of disk space during the nightly migration. " * 20
    rest = "cats sleep in the sun on the windowsill all afternoon. " * 200
    assert len(embedder._windows([first + rest])) > 5
    [alone] = embedder.embed([first])
    query = vectors.from_blob(embedder.query(first + rest))
    [whole] = embedder.embed([first + rest])
    assert float(query @ vectors.from_blob(alone)) > 0.95
    assert float(vectors.from_blob(whole) @ vectors.from_blob(alone)) < 0.9


def test_the_model_runs_the_int8_graph_built_into_the_cache(embedder: Any) -> None:
    import onnx

    from hippod.embed import minilm_model

    built = minilm_model.cached_graph(minilm_model.shipped_graph())
    assert minilm_model.graph() == built and built.exists()
    ops = {node.op_type for node in onnx.load(str(built)).graph.node}
    # Every weight product in int8; no weight turned back to float32 as it runs.
    assert "MatMulInteger" in ops and "DynamicQuantizeLinear" in ops
    assert embedder.rows == 1
    texts = ["the staging deploy needs the VPN", "cats sleep in the sun", "disk full during the migration"]
    shipped = minilm_model.MiniLMEmbedder(
        minilm_model.onnxruntime.InferenceSession(str(minilm_model.shipped_graph())), embedder._tokenizer
    )
    for mine, theirs in zip(embedder.embed(texts), shipped.embed(texts), strict=True):
        assert float(vectors.from_blob(mine) @ vectors.from_blob(theirs)) > 0.97


def test_without_a_cache_it_can_write_the_shipped_graph_runs(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hippod.embed import minilm_model

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert minilm_model.graph() == minilm_model.shipped_graph()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(minilm_model.GRAPH_SWITCH, "shipped")
    assert minilm_model.graph() == minilm_model.shipped_graph()


def test_a_cached_graph_that_will_not_load_is_dropped_for_the_shipped_one(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hippod.embed import minilm_model

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    broken = minilm_model.cached_graph(minilm_model.shipped_graph())
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"")  # cut short by a crash
    embedder = minilm_model.load()
    assert not broken.exists()
    assert len(embedder.embed(["the nightly export timed out"])) == 1


def test_batches_hold_at_most_their_rows_and_tokens() -> None:
    from hippod.embed import minilm_model

    pieces = [(i, [0] * width) for i, width in enumerate([10] * 40 + [200] * 12 + [256] * 3)]
    batches = minilm_model._batches(pieces, 32)
    assert [len(b) for b in batches] == [32, 10, 10, 3]
    assert all(len(b) * len(b[-1][1]) <= minilm_model.BATCH_TOKENS for b in batches)
    assert [len(b) for b in minilm_model._batches(pieces, 1)] == [1] * len(pieces)


async def test_embed_ids_returns_the_vectors_it_wrote(
    embedder: Any, database: dbmod.Database, make_memory: Any
) -> None:
    first, second = make_memory("the deploy failed on friday"), make_memory("cats sleep in the sun")
    async with database.transaction() as conn:
        for memory in (first, second):
            assert await memories.insert(conn, memory)
    written = await embed_ids(database, embedder, [first.id])
    stored = await embeddings.vectors(database.reader, embedder.model, [first.id, second.id])
    assert written == {first.id: stored[first.id][0]} and second.id not in stored
    # A memory whose vector is current is not embedded again.
    again = await embed_ids(database, embedder, [first.id, second.id])
    stored = await embeddings.vectors(database.reader, embedder.model, [first.id, second.id])
    assert again == {second.id: stored[second.id][0]}


async def test_two_passes_at_once_embed_each_memory_once(
    embedder: Any, database: dbmod.Database, make_memory: Any
) -> None:
    # The background queue and an `embed` request may pick the same rows; an API bills each call.
    sent: list[str] = []

    class Counting:
        model, dim = embedder.model, embedder.dim

        def embed(self, texts: list[str]) -> list[bytes]:
            sent.extend(texts)
            return list(embedder.embed(texts))

    rows = [make_memory(f"deploy note {n}") for n in range(3)]
    async with database.transaction() as conn:
        for memory in rows:
            assert await memories.insert(conn, memory)
    ids = [memory.id for memory in rows]
    made = await asyncio.gather(
        embed_ids(database, Counting(), ids),
        scan(database, Counting(), write=True),  # type: ignore[arg-type]
    )
    assert sorted(sent) == sorted(embedding_text(m.content, m.tags) for m in rows)
    assert set(made[0]) == set(ids) and made[1] == (0, 3)


def test_missing_knows_an_install_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from hippod.embed.service import EmbedService

    service = EmbedService()
    assert service.missing(settings({"embeddings": {"enabled": False}}))
    assert not service.missing(settings({}))  # the extra is installed here
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    fresh = EmbedService()
    assert fresh.missing(settings({}))
    assert "the embeddings extra is not installed" in (fresh.reason(DEFAULT_MODEL) or "")


@pytest.mark.parametrize(
    ("cosine", "words_only", "line"),
    [
        (0.82, False, "    BM25: matched [deploy]; cosine: 0.82"),
        (None, True, "    BM25: matched [deploy]; no vector yet: ranked by words alone"),
        (None, False, "    BM25: matched [deploy]"),
    ],
)
def test_why_says_when_a_memory_ranked_by_its_words_alone(
    cosine: float | None, words_only: bool, line: str
) -> None:
    from hippoctl.protocol.replies import RecallItem, Why
    from hippod.recall import render

    why = Why(
        bm25=1.0,
        bm25_norm=1.0,
        matched=["deploy"],
        cosine=cosine,
        base=0.4,
        multipliers={},
        envelope={},
        words_only=words_only,
    )
    item = RecallItem(
        id="m1",
        source="local",
        layer="episodic",
        confidence="observed",
        aged=False,
        pinned=False,
        score=0.4,
        strength=1.0,
        tokens=0,
        tags=[],
        content="the deploy failed",
        created="2026-06-01T00:00:00Z",
        last_retrieved="2026-06-01T00:00:00Z",
        retrieval_count=0,
        half_life_days=30.0,
        why=why,
    )
    assert line in render.item_block(item, why=True).splitlines()
