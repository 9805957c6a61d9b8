"""An embedder that calls a provider's embedding API (`embeddings.provider` "openai", "voyage" or
"cohere"), with the key from the daemon's environment.

It answers the same calls as the shipped model (embed/service.py's `Embedder`), from a worker
thread: each `embed` or `query` runs its calls on an event loop of its own, with one HTTP client
for the run. Its vectors are stored under `<provider>/<model>`, so they never mix with another
model's: a store that changes provider re-embeds its memories, and until then recall ignores the
vectors it holds of the old one.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence

import numpy as np

from hippod.base.thread_stop import Stopped, checkpoint
from hippod.embed import vectors
from hippod.remote import embed_apis, embeddings
from hippod.remote.http import Caller, Policy

# A recall's query waits at most this long for its vector, retried once, before recall goes on with
# words alone and says so: a prompt must not hang on the network.
QUERY_POLICY = Policy(timeout_s=5.0, retries=1, backoff_s=0.25, max_wait_s=2.0)


# How often a call under way looks whether the request that waits on it was cancelled.
STOP_POLL_S = 0.1


async def _unless_stopped(task: asyncio.Task[list[list[float]]]) -> list[list[float]]:
    """The call's answer; a stopping daemon (the awaiting request cancelled) does not wait for a
    slow API: the call is dropped within STOP_POLL_S and thread_stop.Stopped raised."""
    while not task.done():
        await asyncio.wait({task}, timeout=STOP_POLL_S)
        try:
            checkpoint()
        except Stopped:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise
    return task.result()


class ApiEmbedder:
    """One provider's embedding model; `dim` is the size its answers have (the model's documented
    default until the first answer)."""

    def __init__(self, provider: str, model: str, key: str, batch: int | None = None) -> None:
        self.api = embed_apis.APIS[provider]
        self.api_model = model
        # The name its vectors are stored under (Settings.model).
        self.model = f"{provider}/{model}"
        self.dim = embed_apis.KNOWN_DIMS.get(model, 0)
        self.batch = min(batch or self.api.max_inputs, self.api.max_inputs)
        self._key = key
        self._count = 0
        self._seconds = 0.0
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """One normalised vector blob per memory text, in as few calls as the API allows."""
        started = time.perf_counter()
        rows = asyncio.run(self._calls(list(texts), query=False, policy=None))
        with self._lock:
            self._count += len(texts)
            self._seconds += time.perf_counter() - started
        return self._blobs(rows)

    def query(self, text: str) -> bytes:
        """A recall query's vector, asked for as a query (QUERY_POLICY bounds the wait)."""
        return self._blobs(asyncio.run(self._calls([text], query=True, policy=QUERY_POLICY)))[0]

    async def _calls(self, texts: list[str], *, query: bool, policy: Policy | None) -> list[list[float]]:
        out: list[list[float]] = []
        async with Caller(self.api.provider, self._key, policy) as caller:
            for chunk in embed_apis.batches(self.api, texts, self.batch):
                call = embeddings.embed(caller, self.api, self.api_model, chunk, query=query)
                out += await _unless_stopped(asyncio.ensure_future(call))
        return out

    def _blobs(self, rows: list[list[float]]) -> list[bytes]:
        matrix = vectors.normalise(np.asarray(rows, dtype=np.float32))
        self.dim = int(matrix.shape[1])
        return [vectors.to_blob(row) for row in matrix]

    def cosines(self, query: bytes, blobs: Sequence[bytes | None]) -> list[float | None]:
        return vectors.cosines(vectors.from_blob(query), blobs)

    def mmr_order(self, scores: Sequence[float], blobs: Sequence[bytes | None], lam: float) -> list[int]:
        return vectors.mmr_order(scores, blobs, lam, self.dim)

    def per_second(self) -> float | None:
        with self._lock:
            return self._count / self._seconds if self._count and self._seconds > 0 else None
