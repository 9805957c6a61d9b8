"""Which of an import's chunks are near-copies of a stored memory: `textOverlap > t` against the
tenant's live memories, compared exactly with candidates found at a cost per chunk, not per store.
The near-copy index misses a near-copy barely above the threshold about once in fifty (see
hippod.model.minhash); the full-text index it replaced missed none, at a cost that grew with the store.

The candidates come from the near-copy index (store/sqlite/near_lookup.py): the memories sharing a
MinHash band key with the chunk. While an upgraded store's memories still wait for their keys, they
come from the full-text index instead, by overlap.py's rule: a set y with Jaccard(x, y) > t holds
more than t·|x| of x's tokens, so of any p + k of them, p = |x| - ceil(t·|x|) + 1, it holds at least
k + 1. The probe takes x's p + k rarest tokens (by how many index rows hold their stem), counts for
every row how many of them it holds, and compares exactly only the rows holding k + 1 or more. A
row's index terms are the stems of its tokens, so a row holding a token holds its stem: the count is
an upper bound and no near-copy is missed. A token whose stem no row holds costs nothing, which
makes new text cheap.

Blocking sqlite3 code: open, use and close a StoredProbe in one worker thread. It is a ReadView
(read_view.py): the daemon's reader stays free for recall, and the view is that of one moment, up
to `top`, the highest row number it saw. With `ahead`, the near-copy index is searched in a thread,
on a moment of its own (near_lookup.Ahead); the candidates it finds are compared on the probe's.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from hippod.model.simjoin import SetIndex
from hippod.model.terms import stem
from hippod.model.tokenize import tokenize
from hippod.store.sqlite.imports import LIVE, LIVE_BY_ROW
from hippod.store.sqlite.near_lookup import Ahead, NearLookup
from hippod.store.sqlite.read_view import ReadView
from hippod.store.sqlite.rejections import ALL_DIGESTS

_PER_STATEMENT = 500  # bound parameters, well under SQLite's limit
# Probe tokens beyond the p that any overlap needs: each costs one more posting list to count,
# and each cuts the rows left to compare exactly (on the bench corpus at 100k, k = 2 leaves ~50 a
# chunk where k = 0 leaves ~4,000).
EXTRA_PROBES = 2
# Posting lists and token sets kept between chunks (many chunks share rare words); past these
# sizes the caches are emptied, which bounds an import's memory on a store of any size.
POSTINGS_KEPT = 2_000_000
ROWS_KEPT = 200_000
# Chunks whose candidates are read together, in one statement per _PER_STATEMENT rows.
BATCH = 256


def probe_size(size: int, threshold: float) -> int:
    """p: of any p tokens of a set of `size`, a set overlapping it above `threshold` holds one."""
    # The epsilon keeps 0.7 × 10 = 7.000000000000001 from making the prefix one too short.
    return size - math.ceil(threshold * size - 1e-9) + 1


class _Stored:
    """A stored memory as the probe compares it: its index terms, and its tokens when needed (read
    then: most candidates fail the bound from their terms, and an import keeps many thousands)."""

    __slots__ = ("stems", "tokens")

    def __init__(self, terms: str) -> None:
        self.tokens: frozenset[str] | None = None
        # Interned: a store's rows share a few thousand stems, and a copy of each in every row
        # would take more memory than the sets that hold them.
        self.stems = frozenset(map(sys.intern, terms.split()))


class StoredProbe(ReadView):
    """A read-only view of one tenant's live memories for the length of one import's planning."""

    def __init__(
        self, path: str, tenant: str, threshold: float, *, fts5: bool = True, ahead: bool = False
    ) -> None:
        super().__init__(path)
        self.path = path
        self.tenant = tenant
        self.threshold = threshold
        self.fts5 = fts5
        self.top: int = self._conn.execute("SELECT coalesce(max(rowid), 0) FROM memories").fetchone()[0]
        self._postings: dict[str, list[int]] = {}
        self._kept = 0
        self._stored: dict[int, _Stored | None] = {}
        self._empty: bool | None = None
        # How many index rows hold each stem looked up so far: one entry a distinct stem of the import.
        self._rows: dict[str, int] = {}
        self._scan: tuple[int, SetIndex] | None = None
        self._near = NearLookup(self._conn, tenant) if NearLookup.usable(self._conn) else None
        # With `ahead`, the near-copy index is searched ahead of the judge, in a thread (near_lookup.Ahead).
        self._ahead_wanted = ahead
        self._ahead: Ahead | None = None

    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.close()
        super().close()

    def rejected_digests(self) -> set[str]:
        """Every tombstoned digest of the tenant (memory-model.md §12)."""
        rows = self._conn.execute(ALL_DIGESTS, (self.tenant,))
        return {str(r[0]) for r in rows}

    def duplicates(self, sets: Sequence[frozenset[str]], positions: Sequence[int]) -> set[int]:
        """Those of `positions` whose token set in `sets` (an import's chunks) overlaps a live memory
        of the tenant above the threshold, strictly. Called a batch at a time with the same `sets`."""
        if self._near is not None:
            return self._near_copies(self._near, sets, positions)
        if not self.fts5:
            return self._scanned(sets, positions)
        self._term_rows({stem(t) for i in positions for t in sets[i]})
        found: set[int] = set()
        for start in range(0, len(positions), BATCH):
            batch = positions[start : start + BATCH]
            candidates = {i: self._candidates(sets[i]) for i in batch}
            self._load({r for rowids in candidates.values() for r in rowids})
            for i, rowids in candidates.items():
                if self._overlaps(sets[i], rowids):
                    found.add(i)
        return found

    def _near_copies(
        self, near: NearLookup, sets: Sequence[frozenset[str]], positions: Sequence[int]
    ) -> set[int]:
        """`duplicates` through the near-copy index."""
        found: set[int] = set()
        if self._ahead_wanted and self._ahead is None:
            self._ahead = Ahead(self.path, near, sets, BATCH)
        ahead = self._ahead if self._ahead is not None and self._ahead.sets is sets else None
        for start in range(0, len(positions), BATCH):
            batch = positions[start : start + BATCH]
            candidates = ahead.candidates(batch) if ahead else near.candidates([sets[i] for i in batch])
            # A band's candidates seldom come back for another chunk: keep one batch's rows alone,
            # which bounds the probe's memory whatever the store's size.
            self._stored.clear()
            self._load({r for rowids in candidates for r in rowids})
            pairs = zip(batch, candidates, strict=True)
            found.update(i for i, rowids in pairs if self._overlaps(sets[i], rowids))
        return found

    def _overlaps(self, x: frozenset[str], rowids: Collection[int]) -> bool:
        """Whether one of these rows is a live memory whose Jaccard with x is above the threshold."""
        if not x:
            return self._has_empty()
        if not rowids:
            return False
        t = self.threshold
        counted = Counter(stem(token) for token in x)
        stems = frozenset(counted)
        # Stems that stand for more than one of x's tokens, and how many more (usually none).
        more = {term: n - 1 for term, n in counted.items() if n > 1}
        for r in rowids:
            row = self._stored[r]
            if row is None:
                continue
            # x's tokens with a stem the row holds bound the tokens they share; the row has at
            # least as many tokens as stems. Most candidates fail this without being tokenized.
            most = len(stems & row.stems)
            if more:
                most += sum(n for term, n in more.items() if term in row.stems)
            if most / (len(x) + max(len(row.stems), most) - most) <= t:
                continue
            y = self._tokens_of(r, row)
            shared = len(x & y)
            if shared / (len(x) + len(y) - shared) > t:
                return True
        return False

    def _candidates(self, x: frozenset[str]) -> set[int]:
        """Rows that hold at least k + 1 of x's p + k rarest tokens, by their stems."""
        if not x:
            return set()
        p = probe_size(len(x), self.threshold)
        size = min(len(x), p + EXTRA_PROBES)
        need = size - p + 1
        rows = self._rows
        # (index rows holding its stem, token, stem) for every token, the rarest first.
        probes = sorted([(rows[s], t, s) for t in x for s in (stem(t),)])[:size]
        # Two probe tokens with one stem both count for a row holding that stem; a stem no row
        # holds counts for none.
        held = [term for n, _, term in probes if n]
        if len(held) < need:
            return set()
        lists = [self._posting(term) for term in held]
        # levels[j]: the rows in at least j + 1 of the lists so far, rarest first. Only rows that can
        # still reach `need` are raised: the longest lists, last, only touch the highest levels.
        levels: list[set[int]] = [set() for _ in range(need)]
        last = len(lists) - 1
        for n, postings in enumerate(lists):
            # Rows below level need - 1 - (last - n) cannot reach `need` in the lists left.
            for j in range(min(need - 1, n), max(need - 1 - (last - n), 1) - 1, -1):
                if levels[j - 1]:
                    levels[j].update(levels[j - 1].intersection(postings))
            if last - n >= need - 1:
                levels[0].update(postings)
        return levels[-1]

    def _term_rows(self, terms: Iterable[str]) -> None:
        """Learn how many index rows hold each of `terms` not looked up yet (0: none)."""
        distinct = sorted(t for t in terms if t not in self._rows)
        self._rows.update(dict.fromkeys(distinct, 0))
        for start in range(0, len(distinct), _PER_STATEMENT):
            part = distinct[start : start + _PER_STATEMENT]
            rows = self._conn.execute(
                f"SELECT term, doc FROM memories_fts_vocab WHERE term IN ({', '.join('?' * len(part))})", part
            )
            self._rows.update((str(r[0]), int(r[1])) for r in rows)

    def _posting(self, term: str) -> list[int]:
        """The rows of the index that hold `term` (in content or tags: a superset is safe)."""
        postings = self._postings.get(term)
        if postings is None:
            match = '"' + term.replace('"', '""') + '"'
            rows = self._conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (match,))
            postings = [r[0] for r in rows]
            if self._kept + len(postings) > POSTINGS_KEPT:
                self._postings.clear()
                self._kept = 0
            self._postings[term] = postings
            self._kept += len(postings)
        return postings

    def _load(self, rowids: set[int]) -> None:
        """These rows into the cache: None for a row that is not a live memory of the tenant
        (another tenant's, superseded, archived)."""
        missing = sorted(r for r in rowids if r not in self._stored)
        if len(self._stored) + len(missing) > ROWS_KEPT:
            self._stored = {r: row for r, row in self._stored.items() if r in rowids}
        for start in range(0, len(missing), _PER_STATEMENT):
            part = missing[start : start + _PER_STATEMENT]
            self._stored.update(dict.fromkeys(part))
            marks = ", ".join("?" * len(part))
            rows = self._conn.execute(
                f"SELECT rowid, fts_content FROM memories WHERE rowid IN ({marks}) AND {LIVE_BY_ROW}",
                (*part, self.tenant),
            )
            self._stored.update((int(r[0]), _Stored(str(r[1]))) for r in rows)

    def _tokens_of(self, rowid: int, row: _Stored) -> frozenset[str]:
        """The row's tokens, from its content, read once."""
        if row.tokens is None:
            read = self._conn.execute("SELECT content FROM memories WHERE rowid = ?", (rowid,))
            (content,) = read.fetchone()
            row.tokens = frozenset(tokenize(str(content)))
        return row.tokens

    def _has_empty(self) -> bool:
        """Whether a live memory of the tenant has no tokens (overlap 1.0 with a token-less chunk)."""
        if self._empty is None:
            # A text's index terms are empty exactly when it has no tokens (a stem is never empty).
            row = self._conn.execute(
                f"SELECT 1 FROM memories WHERE fts_content = '' AND {LIVE} LIMIT 1", (self.tenant,)
            ).fetchone()
            self._empty = row is not None
        return self._empty

    def _scanned(self, sets: Sequence[frozenset[str]], positions: Sequence[int]) -> set[int]:
        """Without FTS5: every live memory's token set and every chunk's in one prefix-filter index
        (simjoin.py), built at the first call."""
        if self._scan is None:
            rows = self._conn.execute(f"SELECT content FROM memories WHERE {LIVE}", (self.tenant,))
            stored = [frozenset(tokenize(str(r[0]))) for r in rows]
            index = SetIndex([*stored, *sets], self.threshold)
            for i in range(len(stored)):
                index.add(i)
            self._scan = (len(stored), index)
        base, index = self._scan
        return {i for i in positions if index.matches(base + i, strict=True)}
