"""heap.give_back hands freed heap pages back to the OS."""

from __future__ import annotations

import ctypes
import gc
import sys

import pytest

from hippod.base import heap
from hippod.model.terms import stem


def _rss_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))


def _has_malloc_trim() -> bool:
    try:
        ctypes.CDLL(None).malloc_trim  # noqa: B018 - only asking whether the symbol is there
    except (OSError, AttributeError):
        return False
    return True


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _has_malloc_trim(), reason="glibc only")
def test_freed_heap_goes_back_after_give_back() -> None:
    # Blocks under glibc's mmap threshold come from the heap; the last one kept pins its top, so
    # freeing the others leaves their pages mapped until they are trimmed.
    blocks = [bytearray(32 * 1024) for _ in range(3000)]
    for block in blocks:
        block[::4096] = b"x" * len(block[::4096])  # touch every page
    keep = blocks[-1]
    del blocks
    before = _rss_kb()
    heap.give_back()
    assert before - _rss_kb() > 40 * 1024, "at least 40 of the ~94 MB freed went back"
    assert len(keep) == 32 * 1024


def _word(n: int) -> str:
    """A plain word of letters, different for every n (stem caches words, not numbers)."""
    letters = ""
    while True:
        n, digit = divmod(n, 26)
        letters += chr(ord("a") + digit)
        if not n:
            return "zq" + letters


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the RSS from /proc")
def test_give_back_frees_the_arenas_the_stem_cache_kept() -> None:
    # Work that meets a new word now and then among many short-lived small objects, as an import
    # does: each cache entry lands in the arena of the moment, and keeps it once the rest is freed.
    stem.cache_clear()
    work = []
    for n in range(4000):
        work.append([(n, i) for i in range(100)])
        stem(_word(n))
    assert stem.cache_info().currsize == 4000
    del work
    gc.collect()
    before = _rss_kb()
    heap.give_back()
    assert stem.cache_info().currsize == 0
    assert before - _rss_kb() > 15 * 1024, "at least 15 of the ~30 MB the work freed went back"
