"""Tombstones across a merged read: a value rejected in either store stays out of the whole read,
so a project's rejection hides the global store's copy in that project (memory-model.md §12)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from hippod.model.digest import refused
from hippod.model.memory import Memory
from hippod.store.stores import Store

T = TypeVar("T")


async def of_read(tenant: str, project: Store | None, global_: Store | None) -> frozenset[str]:
    """The tombstoned digests of both stores of a merged read; empty when only one store is read
    (its own copies went when the value was rejected)."""
    if project is None or global_ is None:
        return frozenset()
    return await of_stores(tenant, [project, global_])


async def of_stores(tenant: str, stores: Sequence[Store]) -> frozenset[str]:
    """The tombstoned digests of these stores together."""
    found: set[str] = set()
    for store in stores:
        found |= await store.rejections.all_digests(store.db.reader, tenant)
    return frozenset(found)


def visible(rows: Sequence[T], hidden: frozenset[str], memory: Callable[[T], Memory]) -> list[T]:
    """The rows whose memory's value is not among the hidden digests."""
    if not hidden:
        return list(rows)
    return [row for row in rows if not refused(memory(row).content, hidden)]
