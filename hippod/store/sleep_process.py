"""A sleep's plan, computed in a process of its own (sleep.md §2).

Planning a large store is seconds of pure Python and scipy that hold the interpreter's lock. In a
thread of the daemon it slowed every request answered meanwhile, the per-prompt hook included,
several times over. So the daemon starts this module's `main` in a child process, hands it the store's
path and the plan's settings on stdin, and reads the plan back on stdout; the child runs below the
daemon's priority (priority.py). The child only reads: it opens its own read-only snapshot of the
store, as the planning thread did, and every write stays in the daemon's one transaction.

Both sides speak pickle: the plan is the daemon's own data (records and dataclasses), going from
one of its processes to another through a pipe nobody else holds.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import sys
from collections.abc import Callable, Sequence

from hippod import priority, subprocesses
from hippod.errors import HippoError
from hippod.lifecycle.sleep_plan import Plan, Settings, plan
from hippod.store.sleep_snapshot import SnapshotReader

log = logging.getLogger("hippod.sleep")

# A first sleep of a million memories plans in minutes; nothing sensible takes an hour.
TIMEOUT = 3600.0
FAILED = "sleep_failed"

# A plan with what tells later whether it still holds: the marks of the rows it read and the
# statuses of the conflicts it saw (store/sleep.py: changed_since).
Planned = tuple[Plan, Sequence[int], dict[int, str]]


def plan_snapshot(path: str, settings: Settings, new_id: Callable[[], str]) -> Planned:
    """Blocking: reads a snapshot of the store at `path` and computes its plan."""
    with SnapshotReader(path, tenant=settings.tenant) as source:
        result = plan(source, settings, new_id)
        statuses = {c.id: c.status for c in source.conflicts()}
        return result, source.marks, statuses


def _child_argv() -> list[str]:
    """The child's command: this very copy of hippod, whatever the folder the daemon runs in.

    `-P` keeps the working folder off the import path (a `hippod` folder there must not be run);
    the folder holding this hippod is added when the child's interpreter would not find it by
    itself (a source checkout), and never ahead of the standard library otherwise.
    """
    import hippod

    here = os.path.dirname(os.path.dirname(os.path.abspath(hippod.__file__)))
    boot = (
        f"import sys; here = {here!r}; sys.path.insert(0, here) if here not in sys.path else None; "
        f"from {__name__} import main; sys.exit(main())"
    )
    return [sys.executable, "-P", "-c", boot]


async def plan_in_child(path: str, settings: Settings, new_id: Callable[[], str]) -> Planned:
    """What `plan_snapshot(path, settings, new_id)` returns, computed by a child process.

    `new_id` goes by reference (pickle): a function at the top level of a module. Cancelling the
    caller kills the child. A child that fails raises HippoError(sleep_failed) naming why.
    """
    sent = pickle.dumps((path, settings, new_id), protocol=pickle.HIGHEST_PROTOCOL)
    done = await subprocesses.run(_child_argv(), timeout=TIMEOUT, stdin=sent)
    if done.returncode != 0:
        why = done.err.decode("utf-8", "replace").strip()
        log.error("sleep's planner for %s exited with %d:\n%s", path, done.returncode, why)
        last = why.splitlines()[-1] if why else "no message"
        message = f"sleep could not plan {path}: its planner exited with {done.returncode} ({last})"
        raise HippoError(FAILED, message)
    # Unpickling a large plan takes a while: not on the loop.
    planned: Planned = await asyncio.to_thread(pickle.loads, done.out)
    return planned


def main() -> int:
    """The child: read (path, settings, new_id) on stdin, write the pickled plan on stdout."""
    priority.lower_process()
    path, settings, new_id = pickle.loads(sys.stdin.buffer.read())
    planned = plan_snapshot(path, settings, new_id)
    sys.stdout.buffer.write(pickle.dumps(planned, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()
    return 0
