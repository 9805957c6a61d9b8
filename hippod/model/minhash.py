"""The near-copy index's keys: MinHash signatures cut into bands (locality-sensitive hashing).

Two token sets with Jaccard similarity J share a band's key with probability J^ROWS, and share at
least one of BANDS keys with probability 1 - (1 - J^ROWS)^BANDS: 0.982 at J = 0.7, 0.998 at 0.75,
0.99994 at 0.8, and 2e-6 at 0.1. So a text's candidates are the few memories sharing a key with it:
on the bench corpus about one in 100,000 unrelated memories (9 a chunk at a million). The exact
`textOverlap > 0.7` check runs on those alone (store/sqlite/import_probe.py). Five rows a band let
through five times as many unrelated memories, which at a million cost more than the keys saved.

The hashes are fixed (seeded), so keys stored by one version are found by the next: changing SEED,
BANDS or ROWS needs a migration that rebuilds the index.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

BANDS = 32
ROWS = 6
SEED = 20261206
# A key is its band's number above a 40-bit hash of the band's values (and the tenant): two
# different bands never share a key, and two different signatures share one by chance once in 2^40.
HASH_BITS = 40

_rng = np.random.default_rng(SEED)
# Multiply-shift hashing of 32-bit token hashes: (a·x + b) mod 2^64, top 32 bits; a odd.
_A = _rng.integers(1, 2**63, BANDS * ROWS, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
_B = _rng.integers(0, 2**63, BANDS * ROWS, dtype=np.uint64)
# Mixing a band's ROWS values (and the tenant's hash) into one number.
_MIX = _rng.integers(1, 2**63, ROWS + 1, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
_SHIFT_OUT = np.uint64(64 - HASH_BITS)
_BAND_NUMBERS = np.arange(BANDS, dtype=np.uint64) << np.uint64(HASH_BITS)


def token_hash(token: str) -> int:
    """A token's stable 32-bit hash (Python's own hash changes with every process)."""
    return zlib.crc32(token.encode("utf-8"))


def signatures(sets: Sequence[frozenset[str]]) -> npt.NDArray[np.uint64]:
    """One row of BANDS × ROWS minimum hashes for each non-empty set (the caller leaves out empty ones)."""
    if len(sets) == 1 and len(sets[0]) > TOKENS_AT_ONCE:
        # One long text: its minimums over slices of its tokens, a slice's matrix at a time.
        # In any order: a minimum does not depend on how the tokens are sliced.
        tokens = list(sets[0])
        slices = [frozenset(tokens[i : i + TOKENS_AT_ONCE]) for i in range(0, len(tokens), TOKENS_AT_ONCE)]
        return functools.reduce(np.minimum, (_signatures([part]) for part in slices))
    return _signatures(sets)


def _signatures(sets: Sequence[frozenset[str]]) -> npt.NDArray[np.uint64]:
    lengths = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))
    tokens = np.fromiter((token_hash(t) for s in sets for t in s), dtype=np.uint64, count=int(lengths.sum()))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    # Modulo 2^64 on purpose, in place: one matrix of tokens × BANDS × ROWS, not one per step.
    hashed = np.multiply(tokens[:, None], _A[None, :])
    hashed += _B[None, :]
    hashed >>= np.uint64(32)
    return np.minimum.reduceat(hashed, starts, axis=0)


# Tokens and sets hashed together. The hash matrix holds tokens × BANDS × ROWS numbers (6 MB at this
# many), so one long memory cannot make it gigabytes; and numpy's reduceat holds the GIL throughout,
# so a small matrix keeps the event loop's waits short (50 ms at 65,536 tokens, 3 ms at this many,
# and hashing is faster too: the matrix stays in the cache).
TOKENS_AT_ONCE = 4_096
SETS_AT_ONCE = 64


def _parts(filled: list[int], sets: Sequence[frozenset[str]]) -> list[list[int]]:
    """`filled` in runs of at most SETS_AT_ONCE sets and TOKENS_AT_ONCE tokens (a longer set alone)."""
    parts: list[list[int]] = []
    part: list[int] = []
    tokens = 0
    for i in filled:
        if part and (len(part) == SETS_AT_ONCE or tokens + len(sets[i]) > TOKENS_AT_ONCE):
            parts.append(part)
            part, tokens = [], 0
        part.append(i)
        tokens += len(sets[i])
    if part:
        parts.append(part)
    return parts


def band_keys(tenant: str, sets: Sequence[frozenset[str]]) -> list[list[int]]:
    """The BANDS index keys of each token set in a tenant ([] for an empty set: it has no tokens to
    hash, and an empty text is looked for another way)."""
    keys: list[list[int]] = [[] for _ in sets]
    for part in _parts([i for i, s in enumerate(sets) if s], sets):
        minimums = signatures([sets[i] for i in part]).reshape(len(part), BANDS, ROWS)
        salt = np.uint64(token_hash(tenant))
        with np.errstate(over="ignore"):
            mixed = (minimums * _MIX[None, None, :ROWS]).sum(axis=2, dtype=np.uint64) + salt * _MIX[ROWS]
        rows = (mixed >> _SHIFT_OUT) | _BAND_NUMBERS[None, :]
        for i, row in zip(part, rows.tolist(), strict=True):
            keys[i] = row
    return keys
