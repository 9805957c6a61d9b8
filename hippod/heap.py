"""Handing freed heap memory back to the operating system after a large piece of work."""

from __future__ import annotations

import ctypes
import sys


def give_back() -> None:
    """Return the free pages of the C heap to the OS (glibc's malloc_trim).

    A sleep of a large store allocates and frees a few hundred megabytes of rows, token numbers
    and join arrays; glibc keeps most freed pages mapped, so without this the idle daemon would go
    on holding tens of megabytes it no longer uses. Elsewhere (macOS, Windows, musl) a no-op.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own symbols, the C library's among them
    except (OSError, AttributeError):
        return  # a C library without malloc_trim
    trim(0)
