"""heap.give_back hands freed heap pages back to the OS."""

from __future__ import annotations

import ctypes
import sys

import pytest

from hippod import heap


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
