"""The `context --auto` query (recall.md §9.2): changed paths, else the branch name, else none.

The rules are pure functions; `auto_query` runs git in the request's directory to feed them.
"""

from __future__ import annotations

import asyncio
import re

from hippod.base import subprocesses

GIT_TIMEOUT = 3.0
MAX_TOKENS = 10
MIN_TOKEN_CHARS = 3
IGNORED_PATH_TOKENS = frozenset({"src", "dist", "test", "tests", "node_modules", "index"})
IGNORED_BRANCHES = frozenset({"main", "master", "HEAD"})

_PATH_SPLIT = re.compile(r"[/\\.]")
_BRANCH_SPLIT = re.compile(r"[-_/]")


def query_from_paths(paths: list[str]) -> str:
    """The first 10 distinct path tokens longer than 2 chars that are not build or test noise."""
    found: dict[str, None] = {}
    for path in paths:
        for token in _PATH_SPLIT.split(path.strip()):
            if len(token) >= MIN_TOKEN_CHARS and token not in IGNORED_PATH_TOKENS:
                found.setdefault(token)
                if len(found) == MAX_TOKENS:
                    return " ".join(found)
    return " ".join(found)


def query_from_branch(branch: str) -> str:
    """The branch name with `- _ /` as spaces; empty for main, master and a detached HEAD."""
    branch = branch.strip()
    if not branch or branch in IGNORED_BRANCHES:
        return ""
    return " ".join(_BRANCH_SPLIT.sub(" ", branch).split())


async def _git(cwd: str, *args: str, deadline: float) -> str | None:
    """git's stdout, or None when it fails, is missing, or runs past the deadline."""
    remaining = deadline - asyncio.get_running_loop().time()
    if remaining <= 0:
        return None
    try:
        done = await subprocesses.run(["git", *args], timeout=remaining, cwd=cwd)
    except (OSError, TimeoutError):
        return None
    if done.returncode != 0:
        return None
    return done.out.decode("utf-8", errors="replace")


async def auto_query(cwd: str, timeout: float = GIT_TIMEOUT) -> str:
    """The --auto query for `cwd`; empty when neither rule yields one (then `*` mode applies)."""
    deadline = asyncio.get_running_loop().time() + timeout
    changed = await _git(cwd, "diff", "--name-only", "HEAD", deadline=deadline)
    if changed:
        query = query_from_paths(changed.splitlines())
        if query:
            return query
    branch = await _git(cwd, "branch", "--show-current", deadline=deadline)
    return query_from_branch(branch or "")
