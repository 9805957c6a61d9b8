"""The default embedder: wordllama, whose weights ship inside its wheel (recall.md §10.1)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import wordllama
from wordllama import WordLlama

from hippod.embed import vectors

CHUNK_CHARS = 2000
BATCH = 32


class WordLlamaEmbedder:
    """A loaded wordllama model; every vector it hands out is normalised."""

    def __init__(self, model: str, dim: int, inference: object) -> None:
        self.model = model
        self.dim = dim
        self._inference = inference

    def _vectors(self, texts: Sequence[str]) -> vectors.Vector:
        """Mean-pooled vectors, normalised.

        wordllama pads a batch to its longest text and never truncates, so a long memory would
        cost memory in proportion to its length times the batch. Texts are cut into chunks of
        CHUNK_CHARS, the chunks embedded in batches of similar length, and each text's vector is
        the mean of its chunks' vectors weighted by their length, which is close to pooling over
        the whole text at once.
        """
        pieces: list[tuple[int, str]] = []
        for index, text in enumerate(texts):
            for start in range(0, max(len(text), 1), CHUNK_CHARS):
                pieces.append((index, text[start : start + CHUNK_CHARS]))
        pieces.sort(key=lambda p: len(p[1]))
        raw = self._inference.embed(  # type: ignore[attr-defined]
            [text for _, text in pieces], norm=False, return_np=True, batch_size=BATCH
        )
        sums = np.zeros((len(texts), self.dim), dtype=np.float32)
        for (index, text), row in zip(pieces, np.asarray(raw, dtype=np.float32), strict=True):
            sums[index] += row * max(len(text), 1)
        return vectors.normalise(sums)

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        if not texts:
            return []
        return [vectors.to_blob(row) for row in self._vectors(texts)]

    def cosines(self, query: str, blobs: Sequence[bytes | None]) -> list[float | None]:
        return vectors.cosines(self._vectors([query])[0], blobs)

    def mmr_order(self, scores: Sequence[float], blobs: Sequence[bytes | None], lam: float) -> list[int]:
        return vectors.mmr_order(scores, blobs, lam, self.dim)


def load(variant: str) -> WordLlamaEmbedder:
    """Load `<config>_<dim>` (e.g. l2_supercat_256) from the files inside the installed package.

    `WordLlama.load()` on its own looks for the bundled tokenizer in the wrong folder and then tries
    to download it, so it is pointed at the package folder with downloads disabled.
    """
    config, _, dim_text = variant.rpartition("_")
    if not config or not dim_text.isdigit():
        raise ValueError(f"expected <config>_<dim>, got {variant!r}")
    dim = int(dim_text)
    folder = os.path.dirname(os.path.abspath(wordllama.__file__))
    inference = WordLlama.load(config=config, cache_dir=folder, dim=dim, disable_download=True)
    return WordLlamaEmbedder(f"wordllama:{variant}", dim, inference)
