"""The embedding APIs of OpenAI (`POST /v1/embeddings`), Voyage AI (`POST /v1/embeddings`) and Cohere
(`POST /v2/embed`): one batch of texts in, one float vector per text out, in the texts' order.

Each API is asked for documents (a memory) or a query (a recall's words) where it tells them apart:
Voyage's `input_type` "document"/"query", Cohere's "search_document"/"search_query"; OpenAI's models
embed both alike."""

from __future__ import annotations

from typing import Any

from hippod.base.errors import HippoError
from hippod.remote.embed_apis import Api
from hippod.remote.http import API_ERROR, Caller


async def embed(caller: Caller, api: Api, model: str, texts: list[str], *, query: bool) -> list[list[float]]:
    """One call: a vector per text, in order."""
    name = api.provider.name
    if name == "cohere":
        body = await caller.post(
            "/v2/embed",
            {
                "model": model,
                "texts": texts,
                "input_type": "search_query" if query else "search_document",
                "embedding_types": ["float"],
            },
        )
        found = body.get("embeddings")
        rows = found.get("float") if isinstance(found, dict) else None
        return _checked(api, rows, len(texts))
    request: dict[str, Any] = {"model": model, "input": texts}
    if name == "voyage":
        request["input_type"] = "query" if query else "document"
    else:
        request["encoding_format"] = "float"
    body = await caller.post("/embeddings", request)
    data = body.get("data")
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise HippoError(API_ERROR, f"{api.provider.title} API: the answer has no data list")
    ordered = sorted(data, key=lambda d: d.get("index", 0) if isinstance(d.get("index"), int) else 0)
    return _checked(api, [d.get("embedding") for d in ordered], len(texts))


def _checked(api: Api, rows: Any, count: int) -> list[list[float]]:
    """The vectors, when there is one list of numbers per text, all of one size."""
    title = api.provider.title
    if not isinstance(rows, list) or len(rows) != count:
        got = len(rows) if isinstance(rows, list) else 0
        raise HippoError(API_ERROR, f"{title} API: {got} vectors came back for {count} texts")
    sizes = set()
    for row in rows:
        if not isinstance(row, list) or not row or not all(isinstance(x, int | float) for x in row):
            raise HippoError(API_ERROR, f"{title} API: a vector is not a list of numbers")
        sizes.add(len(row))
    if len(sizes) != 1:
        raise HippoError(API_ERROR, f"{title} API: the vectors are not all of one size ({sorted(sizes)})")
    return rows
