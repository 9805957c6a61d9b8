"""End-to-end: the API embedders (`embeddings.provider` "openai", "voyage", "cohere") with the real
daemon, against a local stub of each API answering in its documented shapes: what each call sends,
its batches, the vectors stored with their model and size, a missing key's one line, a refused key
and a rate limit, and nothing sent when the provider is not set."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from model_stub import (
    COHERE_EMBED,
    KEYS,
    OPENAI_EMBED,
    VOYAGE_EMBED,
    ModelStub,
    cohere_embed,
    cohere_error,
    openai_embeddings,
    voyage_embeddings,
)

if TYPE_CHECKING:
    from e2e.harness import Hippo

# provider: (path, reply, default model, key variable, the request's fields and input types as
# (for memories, for a query); None: the API has no input type)
APIS: dict[str, tuple[str, Any, str, str, set[str], tuple[str, str] | None]] = {
    "openai": (
        OPENAI_EMBED,
        openai_embeddings,
        "text-embedding-3-small",
        "OPENAI_API_KEY",
        {"model", "input", "encoding_format"},
        None,
    ),
    "voyage": (
        VOYAGE_EMBED,
        voyage_embeddings,
        "voyage-3.5",
        "VOYAGE_API_KEY",
        {"model", "input", "input_type"},
        ("document", "query"),
    ),
    "cohere": (
        COHERE_EMBED,
        cohere_embed,
        "embed-v4.0",
        "CO_API_KEY",
        {"model", "texts", "input_type", "embedding_types"},
        ("search_document", "search_query"),
    ),
}


@pytest.fixture
def stub() -> Iterator[ModelStub]:
    server = ModelStub()
    yield server
    server.close()


def start(hippo: Hippo, stub: ModelStub, *, global_off: bool = True, **extra: str | None) -> None:
    """The daemon with every provider pointed at the stub, embeddings not switched off by the
    environment; the global store's turned off in its config.json (with `global_off`), so the
    shipped model is not loaded for it."""
    if global_off:
        os.makedirs(hippo.home, exist_ok=True)
        Path(hippo.home, "config.json").write_text(json.dumps({"embeddings": {"enabled": False}}))
    hippo.start(env=hippo.daemon_env(HIPPO_EMBEDDINGS=None, **{**stub.env(), **extra}))


def project(hippo: Hippo, config: dict[str, Any]) -> str:
    folder = os.path.join(hippo.root, "proj")
    os.makedirs(os.path.join(folder, ".hippo"))
    configure(folder, config)
    hippo.ok("init", cwd=folder)
    return folder


def configure(folder: str, config: dict[str, Any]) -> None:
    Path(folder, ".hippo", "config.json").write_text(json.dumps(config))


def seed(hippo: Hippo, folder: str, count: int) -> None:
    """`count` memories that share no words, imported in one go."""
    lines = [f"- note {n}: " + " ".join(f"t{n}x{k}" for k in range(5)) for n in range(count)]
    path = os.path.join(hippo.root, "notes.md")
    Path(path).write_text("\n".join(lines) + "\n")
    hippo.ok("import", "--markdown", path, cwd=folder)


def vectors(folder: str) -> list[tuple[str, int, int]]:
    with sqlite3.connect(os.path.join(folder, ".hippo", "hippo.db")) as conn:
        rows = conn.execute("SELECT model, dim, length(vector) FROM embeddings").fetchall()
    return [tuple(r) for r in rows]


def turn_on(hippo: Hippo, stub: ModelStub, folder: str, config: dict[str, Any]) -> None:
    """Write `config` with the daemon stopped and start it again: the memories written while
    embeddings were off are then embedded only by what the test runs, not by a background pass
    that saw the change."""
    hippo.stop()
    configure(folder, config)
    start(hippo, stub)


def texts_of(provider: str, body: dict[str, Any]) -> list[str]:
    return list(body["texts" if provider == "cohere" else "input"])


@pytest.mark.parametrize(
    ("provider", "count", "settings", "sizes"),
    [
        # OpenAI takes 2,048 a call; embeddings.batchSize asks for fewer.
        ("openai", 60, {"batchSize": 25}, [25, 25, 10]),
        ("voyage", 130, {}, [128, 2]),
        ("cohere", 100, {}, [96, 4]),
    ],
)
def test_embed_sends_each_api_its_documented_request_in_batches_and_stores_model_and_size(
    hippo: Hippo, stub: ModelStub, provider: str, count: int, settings: dict[str, Any], sizes: list[int]
) -> None:
    path, reply, model, key_env, fields, input_types = APIS[provider]
    stub.serve(path, lambda body: reply(body, dim=12))
    start(hippo, stub)
    folder = project(hippo, {"embeddings": {"enabled": False, "provider": provider, **settings}})
    seed(hippo, folder, count)
    assert stub.requests() == []  # embeddings off: nothing sent
    turn_on(hippo, stub, folder, {"embeddings": {"provider": provider, **settings}})

    done = hippo.ok("embed", cwd=folder)
    assert f"{count} of {count} memories embedded ({provider}/{model}, 12d)" in done.stdout, done.stdout
    sent = stub.requests(path)
    assert [len(texts_of(provider, s.body)) for s in sent] == sizes
    for seen in sent:
        assert set(seen.body) == fields
        assert seen.body["model"] == model
        assert seen.headers["authorization"] == f"Bearer {KEYS[key_env]}"
        if input_types is not None:
            assert seen.body["input_type"] == input_types[0]
    if provider == "openai":
        assert {s.body["encoding_format"] for s in sent} == {"float"}
    if provider == "cohere":
        assert {tuple(s.body["embedding_types"]) for s in sent} == {("float",)}
    embedded = sorted(t for s in sent for t in texts_of(provider, s.body))
    assert len(embedded) == count == len(set(embedded))
    assert set(vectors(folder)) == {(f"{provider}/{model}", 12, 48)} and len(vectors(folder)) == count

    # `embed` again sends nothing: every vector is current.
    hippo.ok("embed", cwd=folder)
    assert len(stub.requests(path)) == len(sizes)

    # A recall embeds its query as a query, and ranks by meaning too (the stub's vectors are
    # arbitrary, so only that the term match is among the results is certain).
    data = hippo.json("recall", "t3x1 note", cwd=folder)
    query = stub.requests(path)[-1].body
    assert texts_of(provider, query) == ["t3x1 note"]
    if input_types is not None:
        assert query["input_type"] == input_types[1]
    assert data["mode"] == "hybrid"
    assert any(r["content"].startswith("note 3:") for r in data["results"])


def test_a_missing_key_is_one_line_in_embed_its_status_and_doctor_and_recall_uses_words(
    hippo: Hippo, stub: ModelStub
) -> None:
    start(hippo, stub, OPENAI_API_KEY=None)
    folder = project(hippo, {"embeddings": {"provider": "openai"}})
    hippo.ok("remember", "the staging deploy needs the VPN", cwd=folder)

    done = hippo.ctl("embed", cwd=folder)
    assert done.returncode == 1
    assert done.stderr.startswith("hippoctl: ") and "OPENAI_API_KEY" in done.stderr.splitlines()[0]
    assert "Traceback" not in done.stderr
    status = hippo.ok("embed", "--status", cwd=folder).stdout
    assert (
        "embeddings unavailable: embeddings.provider 'openai' needs OPENAI_API_KEY in the daemon's "
        "environment, and it is not set" in status
    )
    doctor = hippo.ctl("--json", "doctor", cwd=folder)
    assert doctor.returncode == 1
    report = json.loads(doctor.stdout)
    failed = [c for c in report["checks"] if c["name"] == "Embeddings" and c["status"] == "fail"]
    assert failed and "OPENAI_API_KEY" in failed[0]["message"], report["checks"]

    recalled = hippo.ctl("recall", "staging deploy", cwd=folder)
    assert recalled.returncode == 0 and "the staging deploy needs the VPN" in recalled.stdout
    assert "recall used words alone" in recalled.stderr and "OPENAI_API_KEY" in recalled.stderr
    assert stub.requests() == []


def test_a_rate_limit_is_waited_out_and_a_refused_key_fails_in_one_line_storing_nothing(
    hippo: Hippo, stub: ModelStub
) -> None:
    stub.serve(COHERE_EMBED, cohere_embed)
    start(hippo, stub)
    folder = project(hippo, {"embeddings": {"enabled": False, "provider": "cohere"}})
    seed(hippo, folder, 3)
    turn_on(hippo, stub, folder, {"embeddings": {"provider": "cohere"}})

    stub.fail(COHERE_EMBED, 401, cohere_error("invalid api token"))
    done = hippo.ctl("embed", cwd=folder)
    assert done.returncode == 1 and len(stub.requests(COHERE_EMBED)) == 1  # not retried
    assert done.stderr.splitlines()[0] == (
        "hippoctl: Cohere API: HTTP 401 (the key was refused): invalid api token"
    ), done.stderr
    assert vectors(folder) == []

    stub.fail(COHERE_EMBED, 429, cohere_error("too many requests"), {"retry-after": "0"})
    hippo.ok("embed", cwd=folder)
    assert len(stub.requests(COHERE_EMBED)) == 3  # the 429, then its retry
    assert len(vectors(folder)) == 3

    # A recall whose query cannot be embedded goes on with words alone, and says why.
    for _ in range(2):
        stub.fail(COHERE_EMBED, 500, cohere_error("internal server error"))
    done = hippo.ctl("--json", "recall", "note t1x1", cwd=folder)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["mode"] == "bm25" and reply["results"][0]["content"].startswith("note 1:")
    assert "(recall used words alone: Cohere API: HTTP 500: internal server error)" in done.stderr
    assert len(stub.requests(COHERE_EMBED)) == 5  # the query's call and its one retry


@pytest.mark.embeddings
def test_with_the_provider_unset_nothing_is_sent_though_the_keys_are_there(
    hippo: Hippo, stub: ModelStub
) -> None:
    stub.serve(OPENAI_EMBED, openai_embeddings)
    stub.serve(COHERE_EMBED, cohere_embed)
    # Every key in the daemon's environment; the stores keep the default provider: the shipped model.
    start(hippo, stub, global_off=False)
    folder = project(hippo, {})
    seed(hippo, folder, 5)
    done = hippo.ok("embed", cwd=folder)
    assert "5 of 5 memories embedded (all-MiniLM-L6-v2:int8, 384d)" in done.stdout
    assert hippo.json("recall", "note t1x1", cwd=folder)["mode"] == "hybrid"
    hippo.ctl("doctor", cwd=folder)
    assert stub.requests() == []


def test_a_stopping_daemon_does_not_wait_for_a_slow_api(hippo: Hippo, stub: ModelStub) -> None:
    stub.serve(OPENAI_EMBED, openai_embeddings)
    stub.hang(OPENAI_EMBED, 120)
    start(hippo, stub)
    folder = project(hippo, {"embeddings": {"provider": "openai"}})
    hippo.ok("remember", "the release branch is cut on Mondays", cwd=folder)
    # The background pass's call is under way, and the stub holds it.
    assert hippo.wait_for(lambda: len(stub.requests(OPENAI_EMBED)) == 1, 10)
    assert hippo.stop() == 0  # within the harness's stop timeout, far below the stub's hold
    assert vectors(folder) == []
