"""The team link: delivers the writes queued for the team server, one at a time in the order they
were made, each exactly once; then brings the laptop's copy of the team's memories up to date
(teamlink/cache.py), at once and every PULL_SECONDS. Retrievals and outcome marks of team memories
(teamlink/marks.py) go between the two, up to MARK_BATCH in one request.

A write leaves the queue only once the server has answered it. Each is sent with its request key as
the Idempotency-Key, so one sent again after its answer was lost (the daemon or the connection
died) is stored once. While the server cannot be reached, the sender waits, RETRY_MIN doubling up
to RETRY_MAX seconds, and starts again at once when woken (a new write, `team status`, `team join`).
A write the server refuses (a rejected value, a revoked key) is marked failed with the server's
message and the next one goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import socket
from typing import TYPE_CHECKING

import msgspec

from hippod.base import clock, thread_stop
from hippod.store.sqlite import team_marks, team_outbox
from hippod.store.stores import sqlite_only
from hippod.teamlink import cache, calls, membership

if TYPE_CHECKING:
    from hippod.calls.daemon_view import DaemonView

log = logging.getLogger("hippod.team")

BATCH = 50
# Marks in one `POST /v1/team/marks` (the server takes 1000 at most).
MARK_BATCH = 1000
RETRY_MIN = 0.5
RETRY_MAX = 15.0
# How often the copy of the team's memories asks the server what changed.
PULL_SECONDS = 30.0


class TeamSender:
    def __init__(self, state: DaemonView) -> None:
        self.state = state
        self.sent = 0
        self.marks_sent = 0
        self.reachable: bool | None = None
        self.last_error: str | None = None
        self.synced_at: str | None = None
        self._misses = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Run in the background; the first pass sends what an earlier run left queued."""
        self._task = asyncio.get_running_loop().create_task(self._run())
        self._wake.set()

    def wake(self) -> None:
        self._wake.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        delay: float | None = 0.0
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay or None)
            self._wake.clear()
            try:
                delay = await self.round()
            except Exception:
                log.exception("team: a round of sending and syncing failed")
                delay = RETRY_MAX

    async def round(self) -> float | None:
        """Send what is queued, then sync the copy; seconds until the next round (None: not in a team,
        so only a wake starts one)."""
        joined = membership.read(self.state.registry.global_root)
        if joined is None:
            return None
        delay = await self.flush(joined) or await self.send_marks(joined)
        if delay:
            return delay
        answer = await cache.pull(self.state.registry, joined)
        if answer.status != 200:
            return self._missed(answer)
        self.reachable, self._misses = True, 0
        self.synced_at = clock.iso(clock.now())
        return PULL_SECONDS

    def _missed(self, answer: calls.Answer) -> float:
        """Note an answer that calls for a later try; the seconds to wait."""
        self.reachable = answer.reached
        self.last_error = answer.message() if answer.reached else f"unreachable: {answer.body}"
        self._misses += 1
        return min(RETRY_MAX, RETRY_MIN * float(2 ** min(self._misses, 8)))

    async def flush(self, joined: membership.Membership) -> float:
        """Send what is queued, in order; the seconds to wait before trying again (0: all sent)."""
        registry = self.state.registry
        store = sqlite_only(await registry.open(registry.global_root), "share --team")
        while batch := await team_outbox.next_queued(store.db.reader, BATCH):
            for item in batch:
                answer = await thread_stop.detached(
                    calls.post_memory, joined.url, joined.key, item.body.encode(), item.request_key
                )
                if answer.retry:
                    return self._missed(answer)
                self.reachable, self._misses = True, 0
                ok = answer.status in (200, 201)
                error = None if ok else f"{answer.status}: {answer.message()}"
                if not ok:
                    self.last_error = error
                    log.warning("team: the server refused a queued write (%s)", error)
                status = team_outbox.SENT if ok else team_outbox.FAILED
                async with store.db.transaction() as conn:
                    await team_outbox.mark(conn, item.seq, status, clock.iso(clock.now()), error)
                self.sent += ok
        return 0.0

    async def send_marks(self, joined: membership.Membership) -> float:
        """Send the queued marks, oldest first, MARK_BATCH at a time; the seconds to wait before trying
        again (0: all sent). A batch the server refuses is dropped with a warning: a mark is worth
        less than the queue it would hold up.

        Each batch is applied once: before it is first sent, its last mark is noted in the global
        store (store/sqlite/team_marks.py), so that, sent again after a lost answer (or a restart), it holds
        the same marks under the same Idempotency-Key, which the server applies once.
        """
        registry = self.state.registry
        store = sqlite_only(await registry.open(registry.global_root), "share --team")
        source = _source(registry.global_root, joined)
        while True:
            through = await team_marks.in_flight(store.db.reader)
            batch = await team_marks.oldest(store.db.reader, MARK_BATCH, through)
            if not batch:
                return 0.0
            if through is None:
                through = batch[-1].seq
                async with store.db.transaction() as conn:
                    await team_marks.begin_batch(conn, through)
            kinds: dict[str, list[str]] = {team_marks.RETRIEVED: [], team_marks.GOOD: [], team_marks.BAD: []}
            for mark in batch:
                kinds[mark.kind].append(mark.memory_id)
            answer = await thread_stop.detached(
                calls.post_marks,
                joined.url,
                joined.key,
                msgspec.json.encode(kinds),
                f"marks:{source}:{through}",
            )
            if answer.retry:
                return self._missed(answer)
            self.reachable, self._misses = True, 0
            if answer.status != 200:
                self.last_error = f"{answer.status}: {answer.message()}"
                log.warning("team: the server refused %d marks (%s)", len(batch), self.last_error)
            else:
                self.marks_sent += len(batch)
            async with store.db.transaction() as conn:
                await team_marks.delete_through(conn, through)


def _source(root: str, joined: membership.Membership) -> str:
    """This laptop's membership, as a short stable name: the server keeps batch keys per tenant, and
    two laptops of one member (one key) must not share them."""
    seed = f"{socket.gethostname()}\0{root}\0{joined.joined_at}"
    return hashlib.sha256(seed.encode()).hexdigest()[:16]
