"""Handing freed memory back to the operating system after a large piece of work."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

# What give_back empties first: caches that gain an entry for each new word a piece of work meets
# (recall.terms' stem cache), each added by the module that keeps it.
_CACHES: list[Callable[[], None]] = []


def empty_after_work(cache_clear: Callable[[], None]) -> None:
    """Have give_back call `cache_clear` (a cache's own way of emptying itself) before trimming."""
    _CACHES.append(cache_clear)


def _libc_function(name: str) -> Callable[..., int] | None:
    """A function of the C library on Linux (the process's own symbols hold it), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        found: Callable[..., int] = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None  # a C library without it (musl)
    return found


def trim() -> None:
    """Return the C heap's free pages to the OS (glibc's malloc_trim; elsewhere a no-op)."""
    malloc_trim = _libc_function("malloc_trim")
    if malloc_trim is not None:
        malloc_trim(0)


def give_back() -> None:
    """Return what a large piece of work (an import, a sleep) left free to the OS.

    First the caches of empty_after_work are emptied, recall's stem cache among them. The work adds
    an entry to it whenever it meets a new word, so a few thousand small objects end up scattered
    over most of the arenas Python's allocator took for it, and an arena goes back to the system
    only once every block in it is free: after an 80,000-memory import, 5,680 entries kept 69 of its
    130 arenas (RSS 169 MB, 101 MB once they were dropped), and the next sleep's peak started from
    there. Recall fills the cache again.

    Then the free pages of the C heap (glibc's malloc_trim): a sleep of a large store allocates and
    frees a few hundred megabytes of rows, token numbers and join arrays, and glibc keeps most freed
    pages mapped, so without this the idle daemon would go on holding tens of megabytes it no longer
    uses. Elsewhere (macOS, Windows, musl) that part is a no-op.
    """
    for cache_clear in _CACHES:
        cache_clear()
    trim()
