"""What the daemon's planning processes share (a sleep's plan, a large import's): the command that
starts one on this very copy of hippod, and the process's ties to the daemon that started it."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys


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
