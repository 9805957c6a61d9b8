"""A large import's plan, made in a process of its own and handed back part by part.

The plan is seconds of Python (tokens, MinHash keys, the run's own near-copy check, each memory's
row) that hold the interpreter's lock. In a thread of the daemon it ran beside the writes of the
parts already planned and slowed each about three times over (bench/RESULTS.md), and every
request answered meanwhile with them. So an import of PROCESS_FROM chunks or more starts this
module's `main` in a child: the daemon sends the chunks and the plan's settings on stdin and reads
each part back on stdout as it is made, while its own transaction stores the parts before it. The
child only reads the store, through read-only connections of its own, as the planning thread does;
every write stays the daemon's.

Both sides speak pickle, a length-prefixed frame at a time: the plan is the daemon's own data going
from one of its processes to another through a pipe nobody else holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import pickle
import sqlite3
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

from hippod.base import child, clock, subprocesses
from hippod.base.errors import HippoError
from hippod.calls.progress import Steps
from hippod.ingest.import_core import DUPLICATE_ABOVE, Prepared
from hippod.ingest.planner import ChunkMemory, Plan, plan_chunk_parts
from hippod.store.sqlite.import_probe import StoredProbe

if TYPE_CHECKING:
    # For the annotations alone: the child starts without the daemon's request machinery.
    from hippod.ingest.import_write import Handoff, Seen

log = logging.getLogger("hippod.imports")

# Chunks from which an import plans in a child: starting one costs about a fifth of a second, what
# planning some 1,000 to 2,000 chunks takes in the daemon.
PROCESS_FROM = 5_000
FAILED = "import_failed"
_LENGTH = struct.Struct("!Q")
# The frames a planner sends, by kind, and how many fields follow the kind.
_FIELDS = {"seen": 2, "part": 1, "done": 1, "hippo": 3, "sqlite": 4}
# Seconds a planner that sent its last frame gets to exit before it is killed, and that an import
# cancelled while it plans waits for its planner to be gone.
EXIT_WAIT = 5.0
# What is kept of the child's stderr for the log when it fails.
_ERR_KEPT = 64 * 1024


@dataclass(frozen=True, slots=True)
class Job:
    """What the child plans: the chunks of one import against one store's tenant."""

    path: str
    tenant: str
    fts5: bool
    chunks: Prepared
    make: ChunkMemory
    rows: bool


def plan_parts(job: Job, steps: Steps | None = None, *, ahead: bool = False) -> Iterator[Seen | Plan]:
    """Blocking: `job`'s plan, what it is checked against first (the store's highest row number and
    tombstones), then each part as it is made. Run here by the child, and by the daemon's planning
    thread for an import too small to be worth a process; `ahead`: the near-copy index is searched
    in a thread of its own ahead of the judge (the child has a core to itself)."""
    with StoredProbe(job.path, job.tenant, DUPLICATE_ABOVE, fts5=job.fts5, ahead=ahead) as probe:
        rejected = probe.rejected_digests()
        yield probe.top, rejected
        yield from plan_chunk_parts(
            job.chunks, probe.duplicates, rejected, job.make, rows=job.rows, steps=steps
        )


async def plan_in_child(job: Job, handoff: Handoff, steps: Steps) -> None:
    """Hand `job`'s parts to `handoff` as a child process makes them, counting its chunks in `steps`.

    Cancelling the caller kills the child. A SQLite error of the child's is raised again here, as is
    a HippoError; a child that does not start, exits early or sends what is not a frame raises
    HippoError(import_failed) naming it in one line. Either way the handoff is closed with it.
    """
    try:
        await _run(job, handoff, steps)
    except BaseException as exc:
        handoff.close(exc)
        raise
    handoff.close()


async def _run(job: Job, handoff: Handoff, steps: Steps) -> None:
    failed = f"could not plan the import into {job.path}"
    # In a worker thread, as an import's other reading steps are (the pickler still holds the
    # interpreter's lock while it runs: about a tenth of a second for 100,000 chunks).
    sent = await asyncio.to_thread(pickle.dumps, (job, os.getpid()), pickle.HIGHEST_PROTOCOL)
    try:
        proc = await subprocesses.start(child.argv(__name__), stdin=True)
    except OSError as exc:
        raise HippoError(FAILED, f"{failed}: its planner did not start ({exc.strerror or exc})") from None
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    errors = asyncio.ensure_future(_tail(proc.stderr))
    errors.add_done_callback(lambda done: done.cancelled() or done.exception())
    try:
        # A child that could not start closes its end: what it said is read below.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(sent)
            await proc.stdin.drain()
            proc.stdin.close()
        steps.begin("checking for duplicates", len(job.chunks.texts))
        planned = 0
        while (frame := await _frame(proc.stdout, failed)) is not None:
            kind = frame[0]
            if kind == "seen":
                handoff.seen = (frame[1], frame[2])
            elif kind == "part":
                planned += frame[1].total
                steps.tick(planned)
                handoff.put(frame[1])
            elif kind == "done":
                steps.end()
                handoff.close()  # the write need not wait for the child's exit
                log.info("import's planner for %s: peak %.0f MB", job.path, frame[1])
                # The child ends right after its last frame: waited for, not killed.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), EXIT_WAIT)
                return
            elif kind == "hippo":
                raise HippoError(frame[1], frame[2], hint=frame[3])
            else:  # "sqlite"
                raise child.sqlite_error(*frame[1:])
        code = await proc.wait()
        why = (await errors).decode("utf-8", "replace").strip()
        log.error("import's planner for %s exited with %d:\n%s", job.path, code, why)
        last = why.splitlines()[-1] if why else "no message"
        raise HippoError(FAILED, f"{failed}: its planner exited with {code} ({last})")
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        errors.cancel()


async def _tail(stream: asyncio.StreamReader) -> bytes:
    """All the child writes on stderr, its last _ERR_KEPT bytes kept (read to the end, so the child
    never waits on a full pipe)."""
    kept = b""
    while chunk := await stream.read(_ERR_KEPT):
        kept = (kept + chunk)[-_ERR_KEPT:]
    return kept


async def _frame(stream: asyncio.StreamReader, failed: str) -> Any:
    """The next frame from the child, or None at the end of its output."""
    try:
        head = await stream.readexactly(_LENGTH.size)
        (size,) = _LENGTH.unpack(head)
        data = await stream.readexactly(size)
    except asyncio.IncompleteReadError:
        return None
    try:
        frame = pickle.loads(data)
    except Exception:  # whatever the bytes were, they are not a frame
        frame = None
    if not (isinstance(frame, tuple) and frame and len(frame) == 1 + _FIELDS.get(frame[0], -1)):
        raise HippoError(FAILED, f"{failed}: its planner sent output that is not a frame")
    if frame[0] == "part" and not isinstance(frame[1], Plan):
        raise HippoError(FAILED, f"{failed}: its planner sent a part that is not a plan")
    return frame


def _sender(out: BinaryIO) -> Any:
    def send(frame: tuple[Any, ...]) -> None:
        data = pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)
        out.write(_LENGTH.pack(len(data)) + data)
        out.flush()

    return send


def main() -> NoReturn:
    """The child: read (job, daemon pid) on stdin; write frames on stdout (`plan_parts`'s, then
    ("done", peak MB), or ("hippo", code, message, hint) or ("sqlite", ...) for a failure)."""
    # The frames go down a copy of stdout; anything else printed lands on stderr, never in it.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    clock.load_fake_now()
    job, parent = pickle.loads(sys.stdin.buffer.read())
    child.die_with(parent)
    # A plan makes many short-lived objects in no cycle: the cyclic collector's passes free nothing.
    gc.disable()
    send = _sender(out)
    try:
        for item in plan_parts(job, ahead=True):
            send(("part", item) if isinstance(item, Plan) else ("seen", *item))
        send(("done", child.peak_mb()))
    except HippoError as exc:
        send(("hippo", exc.code, exc.message, exc.hint))
    except sqlite3.Error as exc:
        send(("sqlite", *child.sqlite_fields(exc)))
    except BrokenPipeError:  # the daemon stopped reading: it killed the import
        pass
    # Tearing the plan's objects down would only delay the exit.
    os._exit(0)
