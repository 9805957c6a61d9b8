"""Every pair of token sets whose Jaccard reaches a threshold: an exact similarity self-join.

Sleep's merge (Jaccard >= 0.35), dedupe (> 0.7) and conflict (>= 0.5) phases each need all such
pairs of a store. Two sets x, y with Jaccard >= t share at least a = ceil(t/(1+t)·(|x|+|y|)) tokens.
The join uses three published filters, then checks every remaining pair exactly:

- prefix filtering (AllPairs, Bayardo et al. 2007): with tokens ordered rarest first over the
  collection, two sets sharing a tokens share one among the first |x| - a + 1 tokens of each;
- the ℓ-prefix scheme (AdaptJoin, Wang, Li & Feng 2012): they share at least min(ℓ, a) tokens among
  the first |x| - a + ℓ, so a longer prefix needs more shared tokens and far fewer pairs pass;
- the length filter, applied per pair of size classes as PPJoin does by size order: a is computed
  from the two sets' sizes (a row's own size and the smallest size of the other class), which keeps
  the prefixes short where a simple prefix filter has to allow for any partner size.

The shared prefix tokens of every pair of sets are counted at once as a sparse matrix product
(scipy.sparse), class pair by class pair and in slices of rows that bound its memory. Surviving
pairs are verified exactly: their overlap is counted on the sorted token ranks and the Jaccard
compared with the threshold in the same floating-point expression as `simjoin.jaccard`.

`probe` restricts the join to pairs with at least one probed set, so a sleep that follows another
costs what changed since (the sets not probed were compared with each other then).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from hippod.base.thread_stop import checkpoint

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

ELL = 3  # ℓ of the ℓ-prefix scheme: 3 checked the fewest pairs for the least product work on 100k memories
EXACT_SIZES = 64  # sets up to this size are classed by exact size; larger ones by ranges of 1/16
PRODUCT_WORK = 1_000_000  # shared-prefix counts one product may produce (bounds its memory)
# Candidate pairs verified at once: at most VERIFY_ROWS, and at most VERIFY_CELLS token ranks in
# all, so that long memories (hundreds of tokens each) neither take a gigabyte nor hold a stopping
# daemon for seconds between two checkpoints.
VERIFY_ROWS = 1 << 17
VERIFY_CELLS = 1 << 22
RANK_CHUNK = 1 << 20  # tokens counted at once, when ranking them (their positions: 8 MB)
EPS = 1e-9  # keeps 0.35 × 20 = 7.000000000000001 from rounding a bound up


@dataclass(frozen=True, slots=True)
class TokenSets:
    """Sets of token ids in CSR form: set k holds tokens[indptr[k]:indptr[k + 1]], each id once."""

    indptr: IntArray
    tokens: npt.NDArray[np.int32]

    def __len__(self) -> int:
        return len(self.indptr) - 1


def token_sets(rows: list[list[int]]) -> TokenSets:
    """TokenSets from lists of distinct token ids (tests and small callers)."""
    sizes = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    flat = np.fromiter((t for r in rows for t in r), dtype=np.int32, count=int(indptr[-1]))
    return TokenSets(indptr, flat)


@dataclass(slots=True)
class _SizeClass:
    """Sets of sizes lo..hi: their numbers, sizes and ranks sorted ascending, padded to width hi."""

    lo: int
    hi: int
    members: IntArray  # positions in the joined selection
    sizes: IntArray
    ranks: npt.NDArray[np.int32]  # (len, hi); padding is vocabulary + column, above every real rank
    probe: BoolArray


def _class_bounds(largest: int) -> list[tuple[int, int]]:
    bounds: list[tuple[int, int]] = []
    lo = 1
    while lo <= largest:
        hi = lo if lo <= EXACT_SIZES else lo + lo // 16
        bounds.append((lo, hi))
        lo = hi + 1
    return bounds


@dataclass(frozen=True, slots=True)
class _Ranked:
    """The selected sets as the join reads them from `sets.tokens`, and each token's rank."""

    starts: IntArray  # where each set's tokens start in `sets.tokens`
    held: IntArray  # how many it holds there
    sizes: IntArray  # its size: an empty set holds one token of its own, the last of the vocabulary
    rank: npt.NDArray[np.int32]  # token id -> rank
    vocabulary: int


def _ranked(sets: TokenSets, rows: IntArray) -> _Ranked:
    """The selected rows of `sets`, their tokens ranked by how many selected sets hold them, rarest
    first (ties by id); an empty set holds one token of its own, so two empty sets overlap 1.0 and
    nothing else (recall.md §3).

    The tokens are counted a chunk of sets at a time (RANK_CHUNK tokens) and never gathered whole:
    on a large store an array of all of them is a hundred megabytes or more.
    """
    starts = sets.indptr[rows]
    held = sets.indptr[rows + 1] - starts
    empty = held == 0
    ends = np.cumsum(held)
    # Counts of the token ids held so far: sized by the largest id met, not the store's vocabulary,
    # so that a small tenant's join on a large store costs what its own rows do.
    frequency = np.zeros(0, dtype=np.int64)
    total = int(ends[-1]) if len(ends) else 0
    cuts = np.searchsorted(ends, np.arange(RANK_CHUNK, total, RANK_CHUNK), side="right")
    edges = [0, *(c for c in np.unique(cuts).tolist() if 0 < c < len(rows)), len(rows)]
    for a, b in itertools.pairwise(edges):
        counts = np.bincount(_tokens(sets, starts[a:b], held[a:b], _places(held[a:b])))
        if len(counts) > len(frequency):
            frequency = np.concatenate((frequency, np.zeros(len(counts) - len(frequency), dtype=np.int64)))
        frequency[: len(counts)] += counts
    # The largest id held plus one for the empty sets' token, after every other.
    vocabulary = len(frequency) + 1
    frequency = np.append(frequency, int(empty.sum()))
    order = np.lexsort((np.arange(vocabulary), frequency))
    rank = np.empty(vocabulary, dtype=np.int32)
    rank[order] = np.arange(vocabulary, dtype=np.int32)
    return _Ranked(starts, held, np.where(empty, 1, held), rank, vocabulary)


def _places(held: IntArray) -> IntArray:
    """Each token's place in its set, for sets holding `held` tokens, one set after another."""
    places = np.arange(int(held.sum()), dtype=np.int64)
    places -= np.repeat(np.cumsum(held) - held, held)
    return places


def _tokens(sets: TokenSets, starts: IntArray, held: IntArray, places: IntArray) -> npt.NDArray[np.int32]:
    """The tokens of the sets starting at `starts` and holding `held` tokens, one set after another
    (`places`: `_places(held)`)."""
    tokens: npt.NDArray[np.int32] = sets.tokens[np.repeat(starts, held) + places]
    return tokens


def _classes(ranked: _Ranked, sets: TokenSets, probe: BoolArray) -> list[_SizeClass]:
    classes: list[_SizeClass] = []
    sizes, vocabulary = ranked.sizes, ranked.vocabulary
    for lo, hi in _class_bounds(int(sizes.max())):
        members = np.flatnonzero((sizes >= lo) & (sizes <= hi))
        if not len(members):
            continue
        held = ranked.held[members]
        dense = np.empty((len(members), hi), dtype=np.int32)
        dense[:] = vocabulary + np.arange(hi, dtype=np.int32)
        row = np.repeat(np.arange(len(members)), held)
        column = _places(held)
        dense[row, column] = ranked.rank[_tokens(sets, ranked.starts[members], held, column)]
        dense[held == 0, 0] = ranked.rank[vocabulary - 1]
        dense.sort(axis=1)
        classes.append(_SizeClass(lo, hi, members, sizes[members], dense, probe[members]))
    return classes


def _least_overlap(factor: float, a: IntArray | int, b: IntArray | int) -> IntArray:
    """The overlap two sets of sizes a and b need (rounded down a hair, so never too strict)."""
    total = np.asarray(a, dtype=np.int64) + np.asarray(b, dtype=np.int64)
    need: IntArray = np.ceil(factor * total - EPS).astype(np.int64)
    return need


def _prefixes(group: _SizeClass, need: IntArray, keep: BoolArray, vocabulary: int) -> sp.csr_array:
    """A 0/1 matrix of each kept row's ℓ-prefix: its first size - need + ℓ ranks (at most all)."""
    length = np.where(keep, np.minimum(group.sizes, group.sizes - need + ELL), 0)
    indptr = np.zeros(len(length) + 1, dtype=np.int64)
    np.cumsum(length, out=indptr[1:])
    # Only the kept rows' ranks are read (on the probed side of a daily sleep's join they are a
    # few of many), and rows of one length, as a class of one size mostly is, by slicing.
    rows = np.flatnonzero(length)
    ranks = group.ranks if len(rows) == len(length) else group.ranks[rows]
    shortest, longest = (int(length[rows].min()), int(length[rows].max())) if len(rows) else (0, 0)
    if shortest == longest:
        indices = ranks[:, :longest].ravel()
    else:
        indices = ranks[np.arange(group.hi)[None, :] < length[rows, None]]
    data = np.ones(int(indptr[-1]), dtype=np.int32)
    return sp.csr_array((data, indices, indptr), shape=(len(length), vocabulary))


def _slices(left: sp.csr_array, right: sp.csr_array) -> list[tuple[int, int]]:
    """Row ranges of `left` whose product with right.T makes about PRODUCT_WORK counts or fewer."""
    holders = np.bincount(right.indices, minlength=left.shape[1]).astype(np.int64)
    work = np.cumsum(left @ holders)
    total = int(work[-1]) if len(work) else 0
    cuts = np.searchsorted(work, np.arange(PRODUCT_WORK, total, PRODUCT_WORK), side="right")
    edges = [0, *np.unique(cuts).tolist(), left.shape[0]]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]


def _candidates(
    left: _SizeClass, right: _SizeClass, factor: float, vocabulary: int, rows: BoolArray, columns: BoolArray
) -> Iterator[tuple[IntArray, IntArray]]:
    """(left index, right index) pairs whose ℓ-prefixes share enough tokens, among the left rows
    in `rows` and the right rows in `columns`."""
    need_left = _least_overlap(factor, left.sizes, right.lo)
    need_right = _least_overlap(factor, left.lo, right.sizes)
    keep_left = rows & (need_left <= left.sizes)
    keep_right = columns & (need_right <= right.sizes)
    if not keep_left.any() or not keep_right.any():
        return
    ours = _prefixes(left, need_left, keep_left, vocabulary)
    theirs = _prefixes(right, need_right, keep_right, vocabulary)
    theirs_t = theirs.T.tocsr()
    floor = min(ELL, int(need_left[keep_left].min()), int(need_right[keep_right].min()))
    for start, stop in _slices(ours, theirs):
        checkpoint()
        counts = sp.csr_array(ours[start:stop] @ theirs_t)
        hit = np.flatnonzero(counts.data >= floor)
        if not len(hit):
            continue
        i = np.searchsorted(counts.indptr, hit, side="right") - 1 + start
        j = counts.indices[hit].astype(np.int64)
        enough = counts.data[hit] >= np.minimum(ELL, np.maximum(need_left[i], need_right[j]))
        yield i[enough], j[enough]


def _verify(
    left: _SizeClass,
    right: _SizeClass,
    pairs: tuple[IntArray, IntArray],
    vocabulary: int,
    threshold: float,
    strict: bool,
) -> BoolArray:
    """Which candidate pairs reach the threshold, their overlap counted exactly on sorted ranks."""
    i, j = pairs
    ok = np.zeros(len(i), dtype=np.bool_)
    step = max(1, min(VERIFY_ROWS, VERIFY_CELLS // (left.ranks.shape[1] + right.ranks.shape[1])))
    for start in range(0, len(i), step):
        checkpoint()
        a, b = i[start : start + step], j[start : start + step]
        theirs = right.ranks[b]
        # The right side's padding moves past the left's, so padding never matches padding.
        theirs = np.where(theirs >= vocabulary, theirs + left.hi, theirs)
        both = np.concatenate((left.ranks[a], theirs), axis=1)
        both.sort(axis=1)
        overlap = (both[:, 1:] == both[:, :-1]).sum(axis=1)
        jaccard = overlap / (left.sizes[a] + right.sizes[b] - overlap)
        ok[start : start + step] = jaccard > threshold if strict else jaccard >= threshold
    return ok


def similar_pairs(
    sets: TokenSets,
    rows: IntArray,
    threshold: float,
    *,
    strict: bool = False,
    probe: BoolArray | None = None,
    part: tuple[int, int] = (0, 1),
) -> IntArray:
    """Every pair of the sets numbered in `rows` whose Jaccard is >= threshold (> with strict).

    With `probe` (a flag per set of `sets`), only pairs with at least one probed set. With `part`
    (k, n), only the pairs whose smaller size class is every n-th from the k-th: n processes
    calling with k = 0..n-1 find each pair once between them. Returns an (m, 2) array of set
    numbers, the smaller first, sorted.
    """
    share, shares = part
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold {threshold} is outside (0, 1]")
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) < 2:
        return np.empty((0, 2), dtype=np.int64)
    probed = np.ones(len(rows), dtype=np.bool_) if probe is None else np.asarray(probe, dtype=np.bool_)[rows]
    ranked = _ranked(sets, rows)
    classes = _classes(ranked, sets, probed)
    vocabulary = ranked.vocabulary
    del ranked  # three arrays as long as the rows: not held through the products
    factor = threshold / (1 + threshold)
    found: list[IntArray] = []
    for at, left in enumerate(classes):
        if at % shares != share:
            continue
        for right in classes[at:]:
            if right.lo > left.hi / threshold + EPS:
                break  # the length filter: every larger set is too large for these
            everyone = np.ones(len(right.members), dtype=np.bool_)
            if right is left:
                # Probed rows against all; a pair of two probed rows once.
                passes = [(left.probe, everyone)]
            else:
                passes = [(left.probe, everyone), (~left.probe, right.probe)]
            for among, against in passes:
                for i, j in _candidates(left, right, factor, vocabulary, among, against):
                    if right is left:
                        once = (i < j) | ~left.probe[j]
                        i, j = i[once], j[once]
                    ok = _verify(left, right, (i, j), vocabulary, threshold, strict)
                    a, b = rows[left.members[i[ok]]], rows[right.members[j[ok]]]
                    found.append(np.stack((np.minimum(a, b), np.maximum(a, b)), axis=1))
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    pairs = np.concatenate(found)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
