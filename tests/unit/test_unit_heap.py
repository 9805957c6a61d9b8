"""heap.give_back hands freed heap pages back to the OS.

Each measurement runs in a fresh interpreter: in a test worker, what earlier tests left in the
allocator's arenas decides where the work's objects land, and so what freeing them can give back.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_RSS = """
import gc

from hippod.base import heap


def rss_kb():
    with open("/proc/self/status", encoding="ascii") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("VmRSS:"))
"""


def _freed_kb(body: str) -> int:
    """Run `body` after _RSS in a fresh interpreter; the KB it prints (what give_back returned)."""
    code = _RSS + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


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
    freed = _freed_kb(
        """
        blocks = [bytearray(32 * 1024) for _ in range(3000)]
        for block in blocks:
            block[::4096] = b"x" * len(block[::4096])  # touch every page
        keep = blocks[-1]
        del blocks
        before = rss_kb()
        heap.give_back()
        assert len(keep) == 32 * 1024
        print(before - rss_kb())
        """
    )
    assert freed > 40 * 1024, "at least 40 of the ~94 MB freed went back"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the RSS from /proc")
def test_give_back_frees_the_arenas_the_stem_cache_kept() -> None:
    # Work that meets a new word now and then among many short-lived small objects, as an import
    # does: each cache entry lands in the arena of the moment, and keeps it once the rest is freed.
    freed = _freed_kb(
        """
        from hippod.model.terms import stem


        def word(n):
            # A plain word of letters, different for every n (stem caches words, not numbers).
            letters = ""
            while True:
                n, digit = divmod(n, 26)
                letters += chr(ord("a") + digit)
                if not n:
                    return "zq" + letters


        stem.cache_clear()
        work = []
        for n in range(4000):
            work.append([(n, i) for i in range(100)])
            stem(word(n))
        assert stem.cache_info().currsize == 4000
        del work
        gc.collect()
        before = rss_kb()
        heap.give_back()
        assert stem.cache_info().currsize == 0
        print(before - rss_kb())
        """
    )
    assert freed > 15 * 1024, "at least 15 of the ~30 MB the work freed went back"
