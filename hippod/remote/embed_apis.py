"""Each embedding API's limits and defaults, without the HTTP client (the daemon reads them for
every store's settings; the calls are remote/embeddings.py)."""

from __future__ import annotations

from dataclasses import dataclass

from hippod.remote.providers import COHERE, OPENAI, VOYAGE, Provider


@dataclass(frozen=True)
class Api:
    """One provider's embedding API: the default model, the most texts one call may carry, and
    the characters one call should carry at most (the APIs also cap a call's tokens: OpenAI 300,000
    a request, Voyage 120,000 for its large models; at about 4 characters a token, 400,000
    characters stay under both)."""

    provider: Provider
    default_model: str
    max_inputs: int
    max_chars: int = 400_000


APIS: dict[str, Api] = {
    # OpenAI: at most 2,048 inputs an array.
    "openai": Api(OPENAI, "text-embedding-3-small", 2048),
    # Voyage: at most 1,000 texts a list; 128 keeps every model under its token cap.
    "voyage": Api(VOYAGE, "voyage-3.5", 128),
    # Cohere v2 embed: at most 96 texts a call.
    "cohere": Api(COHERE, "embed-v4.0", 96),
}

# The vector size of the providers' current models at their default output, shown by `embed
# --status` before the first call has told it; a model not named here is learned from its answer.
KNOWN_DIMS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "voyage-3.5": 1024,
    "voyage-3.5-lite": 1024,
    "voyage-3-large": 1024,
    "voyage-code-3": 1024,
    "embed-v4.0": 1536,
    "embed-english-v3.0": 1024,
    "embed-multilingual-v3.0": 1024,
    "embed-english-light-v3.0": 384,
}


def batches(api: Api, texts: list[str], limit: int | None = None) -> list[list[str]]:
    """`texts` cut into calls of at most `limit` (the API's most, by default) texts and the API's
    characters; a text longer than that alone goes alone (the API cuts it to its context)."""
    most = min(limit or api.max_inputs, api.max_inputs)
    out: list[list[str]] = []
    chars = 0
    for text in texts:
        if out and len(out[-1]) < most and chars + len(text) <= api.max_chars:
            out[-1].append(text)
            chars += len(text)
        else:
            out.append([text])
            chars = len(text)
    return out
