"""The API embedders' settings, batches and Network line, without a daemon."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hippod.doctor import settings as doctor_settings
from hippod.doctor.network import network_check
from hippod.embed.service import settings
from hippod.remote.embed_apis import APIS, batches


def test_a_provider_names_its_vectors_and_takes_its_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HIPPO_EMBEDDINGS", raising=False)
    assert settings({"embeddings": {"provider": "voyage"}}).model == "voyage/voyage-3.5"
    section = {"provider": "openai", "model": "text-embedding-3-large", "batchSize": 9}
    chosen = settings({"embeddings": section})
    assert (chosen.model, chosen.remote, chosen.batch) == ("openai/text-embedding-3-large", True, 9)
    local = settings({"embeddings": {"provider": "local"}})
    assert (local.model, local.remote) == ("all-MiniLM-L6-v2:int8", False)
    wrong = settings({"embeddings": {"provider": "gemini"}})
    assert wrong.mode == "off" and wrong.off_reason is not None
    assert "embeddings.provider 'gemini' is not one of local, openai, voyage, cohere" in wrong.off_reason


def test_batches_keep_each_apis_count_and_size() -> None:
    cohere = APIS["cohere"]
    assert [len(b) for b in batches(cohere, ["x"] * 200)] == [96, 96, 8]
    assert [len(b) for b in batches(cohere, ["x"] * 200, 50)] == [50, 50, 50, 50]
    assert [len(b) for b in batches(cohere, ["x"] * 200, 500)] == [96, 96, 8]  # never past the API's
    big = "y" * (APIS["openai"].max_chars // 2)
    assert [len(b) for b in batches(APIS["openai"], [big, big, big, "z"])] == [2, 2]
    assert batches(APIS["voyage"], []) == []


def test_the_network_check_names_an_api_embedder_and_a_default_reranker(tmp_path: Path) -> None:
    root = tmp_path / "global"
    root.mkdir()
    (root / "config.json").write_text(
        json.dumps({"embeddings": {"provider": "cohere"}, "reranker": {"default": "voyage:rerank-2.5"}})
    )
    store = doctor_settings.read_store_config(str(root), "global")
    env = {"CO_API_URL": "http://127.0.0.1:9", "CO_API_KEY": "co-secret"}
    message = network_check(env, [store], str(root)).message
    assert (
        f'{root / "config.json"} sets embeddings.provider "cohere", which sends memory text to Cohere\'s '
        "embedding API at http://127.0.0.1:9" in message
    )
    assert "Voyage AI's rerank API at https://api.voyageai.com/v1 on every hippoctl recall" in message
    assert (
        "hippoctl recall --reranker cohere sends the query and the top results' text to Cohere's rerank "
        "API when you run it" in message
    )
    assert "co-secret" not in message
    plain = network_check({}, [doctor_settings.read_store_config(str(tmp_path / "p"), "project")], str(root))
    assert "embedding API" not in plain.message and "rerank API at" not in plain.message
    assert "rerank API" not in plain.message  # no key of a rerank API: nothing to name


def test_doctor_fails_an_api_embedder_without_its_key(tmp_path: Path) -> None:
    root = tmp_path / "global"
    root.mkdir()
    (root / "config.json").write_text(json.dumps({"embeddings": {"provider": "voyage"}}))
    store = doctor_settings.read_store_config(str(root), "global")
    [check] = doctor_settings.embeddings_check([store], None, {}, env={})
    assert check.status == "fail" and "needs VOYAGE_API_KEY in the daemon's environment" in check.message
    [fine] = doctor_settings.embeddings_check([store], None, {}, env={"VOYAGE_API_KEY": "pa-x"})
    assert fine.status == "ok"
