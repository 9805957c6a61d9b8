"""Vector math for hybrid recall: blobs, cosines and maximal marginal relevance (recall.md §10)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


def normalise(rows: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    """Each row scaled to unit length; an all-zero row stays zero."""
    matrix = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: npt.NDArray[np.float32] = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return unit


def to_blob(vector: Vector) -> bytes:
    """float32 little-endian, the storage format of the embeddings table."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> Vector:
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


def cosines(query: Vector, blobs: Sequence[bytes | None]) -> list[float | None]:
    """Cosine of a unit query vector with each stored unit vector; None where a blob is missing."""
    present = [i for i, b in enumerate(blobs) if b is not None and len(b) == 4 * query.shape[0]]
    out: list[float | None] = [None] * len(blobs)
    if not present:
        return out
    matrix = np.stack([from_blob(blobs[i]) for i in present])  # type: ignore[arg-type]
    values = matrix @ query
    for index, value in zip(present, values.tolist(), strict=True):
        out[index] = float(value)
    return out


def mmr_order(scores: Sequence[float], blobs: Sequence[bytes | None], lam: float, dim: int) -> list[int]:
    """Greedy MMR: each pick maximises lam x score/max_score - (1 - lam) x max cosine to the picked.

    Items without a vector have no similarity to anything. Ties keep the incoming order.
    """
    n = len(scores)
    if n == 0:
        return []
    top = max(scores)
    relevance = np.array([s / top if top > 0 else 0.0 for s in scores], dtype=np.float64)
    matrix = np.zeros((n, dim), dtype=np.float32)
    for i, blob in enumerate(blobs):
        if blob is not None and len(blob) == 4 * dim:
            matrix[i] = from_blob(blob)
    similarity = (matrix @ matrix.T).astype(np.float64)
    closest = np.zeros(n, dtype=np.float64)  # max cosine to anything picked so far
    left = np.ones(n, dtype=bool)
    order: list[int] = []
    for _ in range(n):
        gain = lam * relevance - (1.0 - lam) * closest
        gain[~left] = -np.inf
        pick = int(np.argmax(gain))  # the first index wins a tie
        order.append(pick)
        left[pick] = False
        closest = np.maximum(closest, similarity[pick])
    return order
