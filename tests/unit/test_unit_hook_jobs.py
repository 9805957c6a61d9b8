"""The hook job queue (hippod/calls/hook_jobs.py): a job's spool file lasts until the job is done, jobs of
one store run in turn, and a stop leaves the unstarted ones in the spool."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from hippoctl.protocol import spool
from hippod.calls.hook_jobs import HookJob, HookJobs


def document() -> spool.SpoolFile:
    return spool.SpoolFile(v=1, kind="session-end", created_at="2026-10-01T00:00:00Z", cwd="/p", env={},
                           argv=["session-end"], stdin={"session_id": "s"})  # fmt: skip


class Work:
    """Work that records its start and waits until the test lets it finish (or fail)."""

    def __init__(self, log: list[str], name: str, fail: bool = False) -> None:
        self.log, self.name, self.fail = log, name, fail
        self.go = asyncio.Event()

    async def __call__(self) -> None:
        self.log.append(f"start {self.name}")
        await self.go.wait()
        if self.fail:
            raise RuntimeError("boom")
        self.log.append(f"end {self.name}")


def job(home: Path, key: str, store: str, work: Work) -> HookJob:
    return HookJob(key=key, store=store, home=str(home), document=document(), work=work)


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def test_jobs_of_one_store_run_in_turn_and_remove_their_file_when_done(tmp_path: Path) -> None:
    async def run() -> None:
        log: list[str] = []
        jobs = HookJobs(concurrency=2)
        works = {name: Work(log, name) for name in ("a1", "a2", "b1", "c1")}
        for name, work in works.items():
            await jobs.submit(job(tmp_path, f"k-{name}", name[0], work))
        await settle()
        # a2 waits for a1 (same store); c1 waits for a free slot.
        assert log == ["start a1", "start b1"]
        assert (jobs.running, jobs.pending) == (2, 2)
        assert sorted(spool.json_names(str(tmp_path / "spool" / "session-end"))) == [
            "k-a1.json", "k-a2.json", "k-b1.json", "k-c1.json"]  # fmt: skip
        assert jobs.holds("k-a2") and not jobs.holds("k-zz")
        works["a1"].go.set()
        await settle()
        assert log[2:] == ["end a1", "start a2"]
        assert not os.path.exists(tmp_path / "spool" / "session-end" / "k-a1.json")
        for work in works.values():
            work.go.set()
        while jobs.running or jobs.pending:
            await asyncio.sleep(0.01)
        assert spool.json_names(str(tmp_path / "spool" / "session-end")) == []
        assert not jobs.holds("k-c1")

    asyncio.run(run())


def test_a_failed_job_keeps_its_file_and_is_noted_as_a_try(tmp_path: Path) -> None:
    async def run() -> None:
        noted: list[tuple[str, str]] = []
        jobs = HookJobs()
        jobs.on_failure = lambda path, message: noted.append((os.path.basename(path), message))
        work = Work([], "x", fail=True)
        work.go.set()
        await jobs.submit(job(tmp_path, "k-x", "s", work))
        await jobs.drain(5)
        assert noted == [("k-x.json", "internal error in hippod (RuntimeError); see its log")]
        assert spool.json_names(str(tmp_path / "spool" / "session-end")) == ["k-x.json"]

    asyncio.run(run())


def test_a_stop_starts_nothing_more_and_leaves_the_rest_in_the_spool(tmp_path: Path) -> None:
    async def run() -> None:
        log: list[str] = []
        jobs = HookJobs(concurrency=1)
        running, queued, late = Work(log, "r"), Work(log, "q"), Work(log, "l")
        await jobs.submit(job(tmp_path, "k-r", "s", running))
        await jobs.submit(job(tmp_path, "k-q", "t", queued))
        await settle()
        folder = tmp_path / "spool" / "session-end"
        (folder / "k-q.json").unlink()  # gone meanwhile: the stop writes it back
        assert jobs.close() == 1
        await jobs.submit(job(tmp_path, "k-l", "u", late))  # arrives during the stop
        queued.go.set()
        late.go.set()
        await jobs.drain(0.1)  # the running job is cancelled: its file stays too
        assert log == ["start r"]
        assert sorted(spool.json_names(str(folder))) == ["k-l.json", "k-q.json", "k-r.json"]

    asyncio.run(run())


def test_a_key_is_held_while_a_request_for_it_is_decided(tmp_path: Path) -> None:
    jobs = HookJobs()
    assert jobs.reserve("k") is True
    assert jobs.reserve("k") is False and jobs.holds("k")
    jobs.release("k")
    assert jobs.holds("k") is False
