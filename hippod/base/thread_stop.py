"""Work in a worker thread that ends early once the task awaiting it is cancelled.

Cancelling `await asyncio.to_thread(f)` does not stop `f`: the thread runs it to its end, and a
stopping daemon waits for that thread before it can exit (the loop's executor is shut down, and
the interpreter joins its threads). `run` hands `f` a flag, through a context variable that
`to_thread` copies into the thread, and `f`'s long loops call `checkpoint()`, which raises
`Stopped` once the awaiting task was cancelled. A checkpoint outside `run` does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

_FLAG: ContextVar[threading.Event | None] = ContextVar("hippod_thread_stop", default=None)


class Stopped(Exception):
    """Raised at a checkpoint of work whose caller was cancelled; nobody waits for its result."""


async def run(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`await asyncio.to_thread(fn, ...)`, whose checkpoints raise Stopped once this is cancelled."""
    return await run_in(None, fn, *args, **kwargs)


async def run_in(executor: Executor | None, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`run` on a thread of `executor` (the loop's default one for None)."""
    flag = threading.Event()
    token = _FLAG.set(flag)
    try:
        # As asyncio.to_thread does: the thread runs in a copy of this context, so it sees the flag.
        call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(executor, call)
    except asyncio.CancelledError:
        flag.set()
        raise
    finally:
        _FLAG.reset(token)


def checkpoint() -> None:
    """Raise Stopped when the task that runs this thread's work (through `run`) was cancelled."""
    flag = _FLAG.get()
    if flag is not None and flag.is_set():
        raise Stopped("the work was cancelled")


async def detached(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn` in a daemon thread of its own, for blocking work that may be abandoned halfway (a call to
    a team server, bounded by its own timeout): a cancelled caller stops waiting for it, and an
    exiting daemon never waits for that thread, as it would for the loop's executor threads."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():  # the caller was cancelled meanwhile
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        try:
            result, error = fn(*args, **kwargs), None
        except BaseException as exc:  # handed to the caller, as to_thread would
            result, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=work, name="hippod-detached", daemon=True).start()
    return await future
