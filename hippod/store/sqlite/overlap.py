"""Is a new text a near-copy of a live memory? `textOverlap > t` (recall.md §3) without a scan.

Jaccard(x, y) > t needs |x ∩ y| > t·|x|, so any |x| - ceil(t·|x|) + 1 tokens of x include one of
y's. Those tokens (the longest first, which tend to be the rarest) are looked up in the FTS index,
and only the memories holding one of them are compared exactly. A memory's index terms are the
stems of its tokens, so the lookup finds a superset of the memories holding each token.

Used by one-at-a-time writers: `learn --git`, `watch`, agent notes. Bulk imports ask the index the
same way, a batch of chunks at a time, counting more probe tokens (store/sqlite/import_probe.py).
"""

from __future__ import annotations

import math

import aiosqlite

from hippod.model.memory import COLUMNS, Memory
from hippod.model.terms import stem
from hippod.model.tokenize import tokenize
from hippod.store.memory_codec import row_to_memory
from hippod.store.sqlite.memories import live

_SELECT = ", ".join(f"m.{c}" for c in COLUMNS)


def _tokens(text: str, chars: int | None) -> frozenset[str]:
    return frozenset(tokenize(text if chars is None else text[:chars]))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def probe_tokens(tokens: frozenset[str], threshold: float, spare: int = 0) -> list[str]:
    """Tokens of which any set overlapping `tokens` above `threshold` holds at least 1 + spare."""
    need = len(tokens) - math.ceil(threshold * len(tokens) - 1e-9) + 1 + spare
    return sorted(tokens, key=lambda t: (-len(t), t))[: max(need, 1)]


async def find_overlapping(
    conn: aiosqlite.Connection,
    tenant: str,
    text: str,
    threshold: float,
    *,
    chars: int | None = None,
    fts5: bool = True,
) -> Memory | None:
    """A live memory of the tenant whose overlap with `text` is above `threshold`, if any.

    With `chars`, both sides are cut to their first `chars` characters before comparing (agent
    notes compare first 200 chars). The oldest such memory is returned.
    """
    # A cut can end a memory's text inside a word, leaving one token the index does not hold; one
    # spare probe token makes sure a token it does hold is among them.
    spare = 0 if chars is None else 1
    x = _tokens(text, chars)
    if not x:
        # Only another token-less text reaches any threshold; rare enough to scan for.
        pool = await live(conn, tenant)
    elif fts5:
        match = "content : (" + " OR ".join(f'"{stem(t)}"' for t in probe_tokens(x, threshold, spare)) + ")"
        rows = await conn.execute_fetchall(
            f"SELECT {_SELECT} FROM memories_fts f JOIN memories m ON m.rowid = f.rowid "
            "WHERE memories_fts MATCH ? AND m.tenant_id = ? AND m.superseded_by IS NULL "
            "AND m.kind != 'archived' ORDER BY m.created, m.id",
            (match, tenant),
        )
        pool = [row_to_memory(r) for r in rows]
    else:
        pool = await live(conn, tenant)
    for memory in pool:
        if _jaccard(x, _tokens(memory.content, chars)) > threshold:
            return memory
    return None
