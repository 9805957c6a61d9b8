"""What the SQL of both backends shares for a sleep and the audit log: the plan's record, the marks
of the rows it read, the snapshot's page, the runs kept, and an audit entry's metadata."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import msgspec

from hippod.model.sleep_plan import Plan

# A plan with what tells later whether it still holds: the marks of the rows it read and the
# statuses of the conflicts it saw (store/sqlite/sleep.py: changed_since).
Planned = tuple[Plan, Sequence[int], dict[int, str]]

# Memories per page of a sleep's snapshot, read from a worker thread.
PAGE = 1000
# Consolidation runs kept in each store's history.
KEEP_RUNS = 50


def row_mark(memory_id: str, updated_at: str) -> int:
    """A number standing for one memory as it was read (its id and updated_at), for `changed_since`.

    The same in every process (the plan's child computes them, the daemon checks them), so not
    `hash()`, which each process seeds anew: the first 8 bytes of the pair's BLAKE2b, signed.
    """
    digest = hashlib.blake2b(f"{memory_id}\0{updated_at}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


_decode = msgspec.json.Decoder(dict[str, Any])


def decode_metadata(raw: str | bytes) -> dict[str, Any]:
    """An entry's metadata_json as a dict."""
    return _decode.decode(raw)
