"""The rerank APIs of Cohere (`POST /v2/rerank`) and Voyage AI (`POST /v1/rerank`): a query and
documents in, a relevance score per document out."""

from __future__ import annotations

from hippod.base.errors import HippoError
from hippod.remote.http import API_ERROR, Caller
from hippod.remote.providers import COHERE, VOYAGE, Provider

# Each provider's rerank model when `--reranker cohere` or `voyage` names none.
DEFAULT_MODELS = {"cohere": "rerank-v3.5", "voyage": "rerank-2.5"}
PROVIDERS: dict[str, Provider] = {"cohere": COHERE, "voyage": VOYAGE}


async def scores(caller: Caller, model: str, query: str, documents: list[str]) -> list[float]:
    """One call: each document's relevance score to `query`, in the documents' order."""
    provider = caller.provider
    if provider.name == "cohere":
        body = await caller.post(
            "/v2/rerank", {"model": model, "query": query, "documents": documents, "top_n": len(documents)}
        )
        results = body.get("results")
    else:
        body = await caller.post(
            "/rerank", {"query": query, "documents": documents, "model": model, "top_k": len(documents)}
        )
        results = body.get("data")
    if not isinstance(results, list):
        raise HippoError(API_ERROR, f"{provider.title} API: the rerank answer has no results")
    out: list[float | None] = [None] * len(documents)
    for result in results:
        index = result.get("index") if isinstance(result, dict) else None
        score = result.get("relevance_score") if isinstance(result, dict) else None
        fits = isinstance(index, int) and 0 <= index < len(documents)
        if not fits or not isinstance(score, int | float):
            raise HippoError(API_ERROR, f"{provider.title} API: a rerank result has no index or score")
        assert isinstance(index, int)
        out[index] = float(score)
    if any(s is None for s in out):
        raise HippoError(API_ERROR, f"{provider.title} API: the rerank answer left documents unscored")
    return [s for s in out if s is not None]
