"""`learn --git` against one store (ingest.md §5): read the repositories' recent commit subjects
with `git`, store the new lessons and invalidate what migrations made out of date, in one
transaction. Needs no request, so the daily run and sleep's phase 1 call it too."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import aiosqlite

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_capture import Invalidation
from hippoctl.protocol.wording import plural
from hippod.base import clock, subprocesses
from hippod.base.errors import HippoError
from hippod.base.pathtags import path_tags
from hippod.calls.daemon_view import DaemonView
from hippod.calls.request import RequestContext
from hippod.ingest.gitlearn import Lesson, Target, lessons
from hippod.lifecycle import invalidate as inv
from hippod.lifecycle.new_memory import fresh_memory
from hippod.model.memory import Memory
from hippod.store.config import STORE_DEFAULTS
from hippod.store.sqlite import memories
from hippod.store.sqlite.overlap import find_overlapping
from hippod.store.stores import SqliteStore

GIT_TIMEOUT_SECONDS = 30.0
DUPLICATE_ABOVE = 0.7

Say = Callable[[str], Awaitable[None]]


async def _git(*args: str) -> tuple[int, str, str]:
    """Run git without blocking the loop: (exit code, stdout, stderr), or a one-line error."""
    try:
        done = await subprocesses.run(
            ["git", *args], timeout=GIT_TIMEOUT_SECONDS, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"}
        )
    except FileNotFoundError:
        raise HippoError("not_found", "git is not installed (no git on the daemon's PATH)") from None
    return done.returncode, done.out.decode("utf-8", "replace"), done.err.decode("utf-8", "replace")


async def _git_or_timeout(what: str, *args: str) -> tuple[int, str, str]:
    try:
        return await _git(*args)
    except TimeoutError:
        raise HippoError("timeout", f"git took longer than {GIT_TIMEOUT_SECONDS:g} s {what}") from None


async def repo_root(path: str) -> str:
    """The top folder of the git repository holding `path`; a one-line error when there is none."""
    if not os.path.isdir(path):
        raise HippoError("not_found", f"{path}: no such directory")
    code, out, _ = await _git_or_timeout(f"in {path}", "-C", path, "rev-parse", "--show-toplevel")
    if code != 0 or not out.strip():
        raise HippoError("not_found", f"{path} is not in a git repository", hint="learn --git --repos <path>")
    return os.path.realpath(out.strip())


# `--since` stops the walk at the first commit older than the cutoff, so a commit with an older date
# on top (a merged old branch, a cherry-pick) hides newer ones below it; git 2.38 added
# `--since-as-filter`, which only filters. Older gits refuse it, and then `--since` is used.
_SINCE_FLAGS = ["--since-as-filter", "--since"]


async def commit_subjects(root: str, days: int) -> list[str]:
    """Subjects of the commits of the last `days` days, newest first."""
    while True:
        flag = _SINCE_FLAGS[0]
        code, out, err = await _git_or_timeout(
            f"reading the log of {root}",
            "-C",
            root,
            "log",
            "--no-show-signature",  # a user's log.showSignature would mix gpg lines into the subjects
            f"{flag}={days} days ago",
            "--pretty=format:%s",
        )
        if code != 0 and flag != "--since" and flag in err:
            _SINCE_FLAGS.pop(0)  # this git does not know the flag: use the next one from now on
            continue
        break
    if code != 0:
        if "does not have any commits" in err:
            return []
        reason = err.strip().splitlines()[0] if err.strip() else f"exit {code}"
        raise HippoError("internal", f"git log failed in {root}: {reason}")
    return [line for line in out.splitlines() if line.strip()]


@dataclass
class LearnResult:
    """One run's outcome over one or more stores."""

    repos: list[str] = field(default_factory=list)
    commits: int = 0
    lessons: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    skipped: int = 0
    rejected: int = 0
    invalidated: list[Invalidation] = field(default_factory=list)

    def add(self, other: LearnResult) -> None:
        self.repos += other.repos
        self.commits += other.commits
        self.lessons += other.lessons
        self.ids += other.ids
        self.skipped += other.skipped
        self.rejected += other.rejected
        self.invalidated += other.invalidated

    def lines(self) -> list[str]:
        """The reply's lines (ingest.md §5 step 8)."""
        out = [
            f'Invalidated {plural(len(i.ids), "memory")} referencing "{i.target}"'
            for i in self.invalidated
            if i.ids
        ]
        out += [f"Learned: {lesson}" for lesson in self.lessons]
        out.append(
            f"Learned {plural(len(self.lessons), 'lesson')} from {plural(self.commits, 'commit')} "
            f"in {plural(len(self.repos), 'repo')} ({plural(self.skipped, 'duplicate')} skipped)"
        )
        return out


def _tags(lesson: Lesson, root: str) -> list[str]:
    """Lessons are errors to avoid; a migration lesson (rule c) is a plain fact with the default half-life."""
    kind = ["git-learned", "migration"] if lesson.rule == "migration" else ["error", "git-learned"]
    return list(dict.fromkeys([*kind, *path_tags(root)]))


def _context(state: DaemonView, root: str, days: int, tenant: str) -> RequestContext:
    """The request a daemon-started run acts as (memories record its tenant; no session)."""
    request = m.Request(id=0, cwd=root, body=m.LearnGit(days=days, repos=[root]), tenant=tenant)
    return RequestContext(request=request, state=state)


async def learn_from_git(
    state: DaemonView,
    store: SqliteStore,
    repos: Sequence[str],
    days: int,
    say: Say | None = None,
    *,
    tenant: str = "default",
    actor: str = "daemon",
) -> LearnResult:
    """Learn from the commits of the last `days` days of each repository into `store`.

    Every repository is checked and read before anything is written; then the lessons, the
    invalidations and their audit rows go in one transaction.
    """
    patterns = store.config.get("gitLearnPatterns")
    if not isinstance(patterns, list):
        patterns = STORE_DEFAULTS["gitLearnPatterns"]
    result = LearnResult()
    found: list[tuple[str, list[Lesson]]] = []
    roots = [await repo_root(path) for path in repos]
    for root in dict.fromkeys(roots):
        subjects = await commit_subjects(root, days)
        repo_lessons, repeats = lessons(subjects, [str(p) for p in patterns])
        result.repos.append(root)
        result.commits += len(subjects)
        result.skipped += repeats
        found.append((root, repo_lessons))
        if say is not None:
            await say(f"{root}: {plural(len(subjects), 'commit')}, {plural(len(repo_lessons), 'lesson')}")
    if not any(repo_lessons for _, repo_lessons in found):
        return result
    stored: list[Memory] = []
    changed: list[Memory] = []
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        targets: list[Target] = []
        for root, repo_lessons in found:
            ctx = _context(state, root, days, tenant)
            for lesson in repo_lessons:
                if await find_overlapping(conn, tenant, lesson.text, DUPLICATE_ABOVE, fts5=store.fts5):
                    result.skipped += 1
                    continue
                memory = fresh_memory(
                    ctx, store, lesson.text, _tags(lesson, root), source="git-learn", confidence="observed"
                )
                if not await memories.insert(conn, memory):
                    result.rejected += 1
                    continue
                stored.append(memory)
                result.lessons.append(lesson.text)
                result.ids.append(memory.id)
                await memories.audit(
                    conn,
                    ts=now,
                    tenant=tenant,
                    actor=actor,
                    op="git_learn",
                    target=memory.id,
                    metadata={"repo": root},
                )
                if lesson.target is not None:
                    targets.append(lesson.target)
        if targets:
            changed = await _invalidate(conn, tenant, actor, targets, {m.id for m in stored}, now, result)
    store.written(stored + changed)
    return result


async def _invalidate(
    conn: aiosqlite.Connection,
    tenant: str,
    actor: str,
    targets: Sequence[Target],
    run_ids: set[str],
    now: str,
    result: LearnResult,
) -> list[Memory]:
    """`invalidate "<target>"` (memory-model.md §12) for each target, leaving out this run's own
    lessons and pinned memories; a memory is weakened once per run however many targets name it."""
    pool = [mem for mem in await memories.live(conn, tenant) if mem.id not in run_ids and not mem.pinned]
    hit: dict[str, Memory] = {}
    for target in targets:
        matched = [
            mem for mem in pool if mem.id not in hit and inv.matches(target.text, mem.content, mem.tags)
        ]
        for mem in matched:
            inv.weaken(mem, now)
            await memories.update(conn, mem)
            hit[mem.id] = mem
        if matched:
            await memories.audit_many(
                conn,
                ts=now,
                tenant=tenant,
                actor=actor,
                op="invalidate",
                targets=[mem.id for mem in matched],
                metadata={"pattern": target.text[:200], "reason": f"learn --git: {target.kind}"},
            )
        result.invalidated.append(Invalidation(target.text, target.kind, [mem.id for mem in matched]))
    return list(hit.values())
