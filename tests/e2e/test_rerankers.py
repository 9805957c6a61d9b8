"""End-to-end: `recall --reranker` with the real daemon, against a local stub of Cohere's and
Voyage's rerank APIs: the top results come back in the API's order, each API gets its documented
request, nothing is sent with the reranker off or by the hooks, `local` and a missing key are one
line each, and a failing API leaves the blend's order with a warning."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from model_stub import (
    COHERE_EMBED,
    COHERE_RERANK,
    KEYS,
    VOYAGE_RERANK,
    ModelStub,
    cohere_embed,
    cohere_error,
    cohere_rerank,
    voyage_rerank,
)

from e2e.test_prompt_hook import block, payload

if TYPE_CHECKING:
    from e2e.harness import Hippo

# Each memory shares "deploy" with the query; the stub scores them by the number in their text,
# so its order (the highest number first) is not the blend's.
MEMORIES = [
    "deploy deploy deploy staging checklist, item 1",
    "deploy staging needs the VPN, item 4",
    "deploy notes for the release train, item 2",
    "deploy rollback runbook lives in ops, item 3",
]


def by_number(text: str) -> float:
    return float(text.rsplit(" ", 1)[-1]) / 10.0


@pytest.fixture
def stub() -> Iterator[ModelStub]:
    server = ModelStub()
    server.serve(COHERE_RERANK, lambda body: cohere_rerank(body, by_number))
    server.serve(VOYAGE_RERANK, lambda body: voyage_rerank(body, by_number))
    yield server
    server.close()


def setup(hippo: Hippo, stub: ModelStub, config: dict[str, Any] | None = None, **env: str | None) -> str:
    """A daemon pointed at the stub and a project holding MEMORIES; returns the project folder. The
    global store's embeddings are off, so the shipped model is not loaded for it."""
    os.makedirs(hippo.home, exist_ok=True)
    Path(hippo.home, "config.json").write_text(json.dumps({"embeddings": {"enabled": False}}))
    hippo.start(env=hippo.daemon_env(**{**stub.env(), **env}))
    folder = os.path.join(hippo.root, "proj")
    os.makedirs(os.path.join(folder, ".hippo"))
    if config is not None:
        Path(folder, ".hippo", "config.json").write_text(json.dumps(config))
    hippo.ok("init", cwd=folder)
    for text in MEMORIES:
        hippo.ok("remember", text, cwd=folder)
    return folder


def contents(hippo: Hippo, folder: str, *args: str) -> list[str]:
    return [r["content"] for r in hippo.json("recall", "deploy", *args, cwd=folder)["results"]]


def test_cohere_reorders_the_top_results_by_its_scores(hippo: Hippo, stub: ModelStub) -> None:
    folder = setup(hippo, stub)
    blend = contents(hippo, folder)
    assert stub.requests() == []  # no reranker: nothing sent
    assert sorted(blend) == sorted(MEMORIES)
    reranked = contents(hippo, folder, "--reranker", "cohere")
    assert reranked == sorted(MEMORIES, key=by_number, reverse=True) != blend
    [seen] = stub.requests(COHERE_RERANK)
    assert seen.body == {"model": "rerank-v3.5", "query": "deploy", "documents": blend, "top_n": 4}
    assert seen.headers["authorization"] == f"Bearer {KEYS['CO_API_KEY']}"


def test_voyage_with_a_model_and_only_the_top_n_reordered(hippo: Hippo, stub: ModelStub) -> None:
    folder = setup(hippo, stub, {"reranker": {"topN": 2}})
    blend = contents(hippo, folder)
    reranked = contents(hippo, folder, "--reranker", "voyage:rerank-2.5-lite")
    assert reranked == sorted(blend[:2], key=by_number, reverse=True) + blend[2:]
    [seen] = stub.requests(VOYAGE_RERANK)
    assert seen.body == {"query": "deploy", "documents": blend[:2], "model": "rerank-2.5-lite", "top_k": 2}
    assert seen.headers["authorization"] == f"Bearer {KEYS['VOYAGE_API_KEY']}"


def test_the_default_reranker_serves_recall_but_never_a_hook_and_off_overrides_it(
    hippo: Hippo, stub: ModelStub
) -> None:
    stub.serve(COHERE_EMBED, cohere_embed)
    config = {
        "reranker": {"default": "cohere"},
        "embeddings": {"provider": "cohere"},
        "pinnedInject": {"promptRecall": True},
    }
    folder = setup(hippo, stub, config, HIPPO_EMBEDDINGS=None)
    hippo.ok("embed", cwd=folder)
    assert hippo.wait_for(lambda: "4 of 4" in hippo.ok("embed", "--status", cwd=folder).stdout, 10)
    sent = len(stub.requests())

    # The per-prompt hook and the session-start context, with an API embedder and a default
    # reranker: words alone, nothing sent.
    hook = ("context", "--pinned-only", "--include-recent", "5", "--format", "additional-context")
    done = hippo.ctl(*hook, input=payload(folder, prompt="the deploy checklist"), cwd=hippo.root)
    assert done.returncode == 0 and "deploy" in block(done.stdout)
    assert "deploy" in hippo.ok("context", "deploy checklist", cwd=folder).stdout
    assert len(stub.requests()) == sent

    assert contents(hippo, folder, "--reranker", "off") != sorted(MEMORIES, key=by_number, reverse=True)
    assert stub.requests(COHERE_RERANK) == []
    assert contents(hippo, folder) == sorted(MEMORIES, key=by_number, reverse=True)
    assert len(stub.requests(COHERE_RERANK)) == 1


def test_local_unknown_and_keyless_rerankers_are_one_line_each(hippo: Hippo, stub: ModelStub) -> None:
    folder = setup(hippo, stub, CO_API_KEY=None)
    local = hippo.ctl("recall", "deploy", "--reranker", "local", cwd=folder)
    assert local.returncode == 1 and local.stdout == ""
    assert local.stderr.splitlines() == [
        "hippoctl: --reranker local is not available: no package on PyPI ships a cross-encoder's weights "
        "(flashrank and the others download theirs at first use, which hippod never does) "
        "(try: use --reranker cohere or --reranker voyage)"
    ]
    unknown = hippo.ctl("recall", "deploy", "--reranker", "gpt", cwd=folder)
    assert unknown.returncode == 2 and "--reranker 'gpt'" in unknown.stderr
    keyless = hippo.ctl("recall", "deploy", "--reranker", "cohere", cwd=folder)
    assert keyless.returncode == 1 and "CO_API_KEY" in keyless.stderr.splitlines()[0]
    assert "Traceback" not in local.stderr + unknown.stderr + keyless.stderr
    assert stub.requests() == []


def test_a_failing_rerank_api_keeps_the_blend_order_and_says_why(hippo: Hippo, stub: ModelStub) -> None:
    folder = setup(hippo, stub)
    blend = contents(hippo, folder)
    for _ in range(2):
        stub.fail(COHERE_RERANK, 503, cohere_error("service unavailable"))
    done = hippo.ctl("--json", "recall", "deploy", "--reranker", "cohere", cwd=folder)
    assert done.returncode == 0
    assert [r["content"] for r in json.loads(done.stdout)["results"]] == blend
    assert "(not reranked: Cohere API: HTTP 503: service unavailable)" in done.stderr
    assert len(stub.requests(COHERE_RERANK)) == 2  # the call and its one retry
