"""What the daemon's planning processes share (a sleep's plan, a large import's): the command that
starts one on this very copy of hippod, and the process's ties to the daemon that started it."""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import sqlite3
import sys
from typing import Any


def argv(module: str) -> list[str]:
    """The command that runs `module`'s `main()` in a child: this very copy of hippod, whatever the
    folder the daemon runs in.

    `-P` keeps the working folder off the import path (a `hippod` folder there must not be run);
    the folder holding this hippod goes first only when the child would not find this copy by
    itself (a source checkout run without installing it).
    """
    import hippod

    here = os.path.dirname(os.path.dirname(os.path.abspath(hippod.__file__)))
    boot = (
        f"import importlib.util, sys; here = {here!r}; found = importlib.util.find_spec('hippod'); "
        "sys.path.insert(0, here) if found is None or not (found.origin or '').startswith(here) else None; "
        f"from {module} import main; main()"
    )
    return [sys.executable, "-P", "-c", boot]


def die_with(parent: int) -> None:
    """End this process when the daemon that started it dies, however it dies (Linux; elsewhere
    the child runs to its end and its work is dropped)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    set_death_signal = 1  # PR_SET_PDEATHSIG
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(set_death_signal, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the call above
        os._exit(1)


def peak_mb() -> float:
    """This process's peak resident memory in MB (0 where the system does not say: Windows)."""
    if sys.platform == "win32":
        return 0.0
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024  # bytes there, KiB here


def sqlite_fields(exc: sqlite3.Error) -> tuple[str, str, int, str]:
    """A SQLite error of the child's as plain values (its class name, SQLite name and code, message)."""
    return (
        type(exc).__name__,
        getattr(exc, "sqlite_errorname", ""),
        getattr(exc, "sqlite_errorcode", 0),
        str(exc),
    )


def sqlite_error(name: str, errorname: str, errorcode: int, message: str) -> sqlite3.Error:
    """The child's SQLite error, raised again in the daemon: a corrupt store is then set aside and
    named as when any other request meets it (StoreRegistry.corrupt_error)."""
    kind = getattr(sqlite3, name, sqlite3.DatabaseError)
    if not (isinstance(kind, type) and issubclass(kind, sqlite3.Error)):
        kind = sqlite3.DatabaseError
    error: sqlite3.Error = kind(message)
    error.sqlite_errorname = errorname
    error.sqlite_errorcode = errorcode
    return error


class Pages:
    """A pickle's bytes, handed to the unpickler a page (its 128 KiB prefetch) at a time, or a frame
    of about 64 KiB with protocol 4 and up, or one object's bytes when it is larger.

    `pickle.loads` is one call into C that holds the GIL until the last object is made, and the
    daemon's event loop waits as long: 0.15 to 0.17 s for a plan of a million pairs
    (bench/gil_holds.py). Reading through these methods, the unpickler comes back to Python for
    every page, where the interpreter hands the GIL to a thread that waits for it.
    """

    def __init__(self, data: bytes) -> None:
        self._raw = data
        self._data = memoryview(data)
        self._at = 0

    def _take(self, end: int) -> bytes:
        taken = bytes(self._data[self._at : end])
        self._at = end
        return taken

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes from here on (all of them if `size` is negative)."""
        end = len(self._data) if size < 0 else min(len(self._data), self._at + size)
        return self._take(end)

    def readinto(self, buffer: memoryview | bytearray) -> int:
        """Fill `buffer` from here on; how many bytes went in."""
        size = min(len(buffer), len(self._data) - self._at)
        buffer[:size] = self._data[self._at : self._at + size]
        self._at += size
        return size

    def readline(self) -> bytes:
        """The bytes up to and including the next newline (protocol 0 reads lines)."""
        found = self._raw.find(b"\n", self._at)
        return self._take(len(self._data) if found < 0 else found + 1)

    def peek(self, size: int = 0) -> bytes:
        """The next `size` bytes (fewer at the end), without moving on."""
        return bytes(self._data[self._at : self._at + max(size, 1)])


def unpickle(data: bytes) -> Any:
    """A child's pickled result, read a page at a time (Pages) with the cyclic collector off: a plan
    is hundreds of thousands of small objects in no cycle, which collections triggered as they
    arrive would walk again and again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return pickle.Unpickler(Pages(data)).load()
    finally:
        if enabled:
            gc.enable()
