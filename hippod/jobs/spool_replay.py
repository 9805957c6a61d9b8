"""Replaying the spool (ingest.md §8, daemon.md §11.4): hook requests the client could not deliver.

Files are replayed oldest first, at start and whenever one appears, as if live with their output
discarded. Success deletes the file. A failure is noted in `<name>.err` beside it and retried at the
next start or after 5 minutes, up to 3 tries; then both move to `spool/failed/`. A file that can
never succeed (not JSON, unknown kind, a payload the verb refuses) moves there at once. One that a
daemon can no longer serve because its installed code changed under it (`daemon_outdated`) is not
a try: it waits for the restarted daemon.

Exactly once: each hook request carries a key (its spool file name), and its handler records the
key in the transaction that holds the request's effect (store/sqlite/spool_marks.py). A daemon killed
after that commit but before deleting the file finds the key on the next replay and only deletes.
A request that leaves a job (session-end) hands its file to the job (hook_jobs.py), which records
the key with its last effect and deletes the file itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

from watchfiles import Change, awatch

from hippoctl.protocol import spool
from hippoctl.protocol.errors import DAEMON_OUTDATED
from hippoctl.protocol.files import replace
from hippod.base import clock
from hippod.base.errors import HippoError, log_failure
from hippod.base.logfile import open_append
from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import Dispatch, RequestContext
from hippod.ingest.spool_requests import request_for
from hippod.store.sqlite.spool_marks import AlreadyApplied

log = logging.getLogger("hippod.spool")

MAX_TRIES = 3
RETRY_SECONDS = 300.0
# Errors that another try cannot fix: the file goes to failed/ at once.
PERMANENT = frozenset({"usage", "bad_frame", "unsupported_request"})
_NOTES = (spool.ERR_SUFFIX, ".tmp")
_TRY_LINE = re.compile(r"^\S+ try \d+ of \d+:", re.MULTILINE)


def tries_so_far(err_path: str) -> int:
    """How many tries the `.err` note beside a spool file records."""
    try:
        fd = os.open(err_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        with open(fd, encoding="utf-8", errors="replace") as handle:
            return len(_TRY_LINE.findall(handle.read()))
    except OSError:
        return 0


@dataclass
class SpoolReplayer:
    """Replays the spool folder of one global root; one file at a time, in its own task."""

    state: DaemonView
    # The daemon's dispatcher, which each replayed request runs through.
    dispatch: Dispatch
    debounce_ms: int = 1600
    watch: bool = True
    rescan_seconds: float = 60.0
    replayed: int = 0
    root: str = ""
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.root:
            self.root = spool.spool_root(self.state.registry.global_root)

    def start(self) -> None:
        """Replay what is there now, then watch for more."""
        with contextlib.suppress(OSError):
            # Made up front so that clients rarely create a folder the watcher has not seen yet.
            for kind in spool.KINDS:
                os.makedirs(os.path.join(self.root, kind), mode=0o700, exist_ok=True)
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._work()))
        if self.watch:
            self._tasks.append(loop.create_task(self._watch()))

    async def stop(self) -> None:
        """Stop watching; a replay under way finishes first (its file is either applied or left)."""
        self._stop.set()
        self._wake.set()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _watch(self) -> None:
        try:
            async for changes in awatch(
                self.root, debounce=self.debounce_ms, step=50, stop_event=self._stop, watch_filter=None
            ):
                # A new kind folder counts too: a file written right after its folder was made
                # can arrive without an event of its own, and the pass lists every folder.
                if any(kind != Change.deleted and not path.endswith(_NOTES) for kind, path in changes):
                    self._wake.set()
        except Exception as exc:
            # Without the watcher the periodic rescan still finds new files.
            log_failure("spool watcher", exc)

    async def _work(self) -> None:
        first = True
        while not self._stop.is_set():
            self._wake.clear()
            try:
                next_due = await self.replay_pass(at_start=first)
            except Exception as exc:
                log_failure("spool replay", exc)
                next_due = None
            first = False
            wait = self.rescan_seconds if next_due is None else min(self.rescan_seconds, next_due)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(1.0, wait))

    async def replay_pass(self, *, at_start: bool) -> float | None:
        """Replay every due file, oldest first; returns seconds until the next retry falls due."""
        before = self.replayed
        next_due: float | None = None
        for folder, name in self._pending():
            if self._stop.is_set():
                return None
            path = os.path.join(self.root, folder, name)
            err = path[: -len(spool.SUFFIX)] + spool.ERR_SUFFIX
            if not at_start:
                wait = self._retry_wait(err)
                if wait > 0:
                    next_due = wait if next_due is None else min(next_due, wait)
                    continue
            await self.replay_file(folder, name)
        if self.replayed > before:
            log.info("spool: replayed %d hook requests", self.replayed - before)
        return next_due

    def _pending(self) -> list[tuple[str, str]]:
        """(folder, name) of every pending spool file, oldest first; strays go to failed/ first."""
        found: list[tuple[str, str]] = []
        try:
            entries = list(os.scandir(self.root))
        except OSError:
            return found
        for entry in entries:
            if entry.name.startswith(".") or entry.name == spool.FAILED:
                continue
            if entry.is_dir():
                found += [(entry.name, n) for n in spool.json_names(entry.path)]
            elif entry.name.endswith(spool.SUFFIX):
                self._fail(entry.path, "a spool file belongs in spool/<kind>/, not in spool/ itself")
        found.sort(key=lambda pair: pair[1])
        return found

    @staticmethod
    def _retry_wait(err: str) -> float:
        """Seconds until a file that failed before may be tried again (0: now)."""
        try:
            failed_at = os.stat(err).st_mtime
        except OSError:
            return 0.0
        return max(0.0, failed_at + RETRY_SECONDS - time.time())

    async def replay_file(self, folder: str, name: str) -> bool:
        """Replay one file; True when it was applied (now or before) and deleted, or handed to a job."""
        path = os.path.join(self.root, folder, name)
        key = spool.key_of(name)
        jobs = self.state.hook_jobs
        if jobs.holds(key):
            # Its job is queued or running: the job deletes the file when it is done.
            return False
        try:
            request = request_for(spool.read(path), folder, key)
        except ValueError as exc:
            self._fail(path, f"not replayable: {exc}")
            return False
        try:
            await self.dispatch(RequestContext(request, self.state))
        except AlreadyApplied:
            log.info("spool %s/%s was applied before; removing it", folder, name)
        except HippoError as exc:
            if exc.code in PERMANENT:
                self._fail(path, f"not replayable: {exc.message}")
            elif exc.code != DAEMON_OUTDATED:
                self._tried(path, exc.message)
            # else: not a try; the file waits for the restarted daemon (its handler logged why).
            return False
        except Exception as exc:
            log_failure(f"replaying spool file {folder}/{name}", exc)
            self._tried(path, f"internal error in hippod ({type(exc).__name__}); see its log")
            return False
        self.replayed += 1
        if not jobs.holds(key):
            self._done(path)
        return True

    def _done(self, path: str) -> None:
        for target in (path, _err_of(path)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)

    def _tried(self, path: str, message: str) -> None:
        """Note a failed try; the third one sends the file to failed/."""
        err = _err_of(path)
        tries = tries_so_far(err) + 1
        _append(err, f"{clock.iso(clock.now())} try {tries} of {MAX_TRIES}: {message}")
        log.warning("spool %s: try %d of %d failed", os.path.basename(path), tries, MAX_TRIES)
        if tries >= MAX_TRIES:
            self._move_to_failed(path)

    def _fail(self, path: str, message: str) -> None:
        """Send a file to failed/ now, with the reason in its .err note."""
        _append(_err_of(path), f"{clock.iso(clock.now())} {message}")
        log.warning("spool %s: %s", os.path.basename(path), message)
        self._move_to_failed(path)

    def _move_to_failed(self, path: str) -> None:
        failed = os.path.join(self.root, spool.FAILED)
        try:
            os.makedirs(failed, mode=0o700, exist_ok=True)
            base = os.path.basename(path)[: -len(spool.SUFFIX)]
            stem, n = base, 0
            while os.path.exists(os.path.join(failed, stem + spool.SUFFIX)):
                n += 1
                stem = f"{base}-{n}"
            # The file first: a crash in between leaves an orphan note, never a file tried again.
            replace(path, os.path.join(failed, stem + spool.SUFFIX))
            replace(_err_of(path), os.path.join(failed, stem + spool.ERR_SUFFIX))
        except OSError:
            log.exception("could not move %s to %s", path, failed)


def _err_of(path: str) -> str:
    return path[: -len(spool.SUFFIX)] + spool.ERR_SUFFIX


def _append(path: str, line: str) -> None:
    with contextlib.suppress(OSError), open_append(path) as handle:
        handle.write(line.replace("\n", " ") + "\n")


def start(state: DaemonView, config: dict[str, Any], dispatch: Dispatch) -> SpoolReplayer:
    """Start replaying the spool of this daemon's global root (after the socket is bound), each
    request through `dispatch`."""
    watch = config.get("watch", {})
    replayer = SpoolReplayer(
        state,
        dispatch,
        debounce_ms=int(watch.get("debounceMs", 1600)),
        watch=bool(watch.get("enabled", True)),
        rescan_seconds=float(watch.get("rescanSeconds", 60)),
    )
    # A hook job that fails counts as a try of its spool file, as a failed replay does.
    state.hook_jobs.on_failure = replayer._tried
    replayer.start()
    return replayer
