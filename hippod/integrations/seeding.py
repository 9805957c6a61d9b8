"""The steps `init` and `setup` share: make a store, seed it from git and agent notes, register it for
the daily run, and find the git repositories below a folder (integrations.md §1-§2)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from hippod.agentnotes.importer import import_project, import_store
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.ingest.gitrun import learn_from_git, repo_root
from hippod.store import gitignore
from hippod.store.config import ConfigFile
from hippod.store.roots import DB_NAME, PROJECT_DIR, find_project_root
from hippod.store.stores import SqliteStore, sqlite_only

# The folders and files a fresh store shows (integrations.md §1 step 1).
STORE_DIRS = ("buffer", "episodic", "semantic", "conflicts")
STORE_FILES = (DB_NAME, "stats.json")
SCAN_DEPTH = 3
SCAN_SKIP = frozenset({"node_modules"})


def store_files(store: SqliteStore) -> tuple[str, ...]:
    """The files a fresh store shows: a project store's .gitignore too."""
    return (*STORE_FILES, gitignore.NAME) if store.kind == "project" else STORE_FILES


@dataclass
class Made:
    """A store `make_store` opened, and whether this call created it."""

    store: SqliteStore
    created: bool
    shadows: str | None = None  # a store further up that this one now hides for its subtree


async def make_store(ctx: RequestContext, root: str) -> Made:
    """Open (creating and migrating) the store at `root` with its folders, stats.json and, for a
    project store, its .gitignore."""
    registry = ctx.state.registry
    root = os.path.realpath(root)
    created = not os.path.isfile(os.path.join(root, DB_NAME))
    shadows = None
    if created and root != registry.global_root:
        shadows = find_project_root(os.path.dirname(os.path.dirname(root)), registry.global_root)
    # A config.json that does not parse stops init before it creates anything (HippoError).
    ConfigFile(root).current()
    store = sqlite_only(await registry.open(root), ctx.verb)
    await gitignore.ensure(store, restore=True)
    for name in STORE_DIRS:
        os.makedirs(os.path.join(root, name), mode=0o700, exist_ok=True)
    if not os.path.isfile(os.path.join(root, "stats.json")):
        store.mirrors.files({})  # a mirror pass writes stats.json
        await store.mirrors.flush_now()
    return Made(store, created, shadows)


async def learn_git(
    ctx: RequestContext, store: SqliteStore, folder: str, days: int
) -> tuple[int | None, str | None]:
    """Git lessons of the last `days` days of the repository holding `folder` into `store`.

    Returns (lessons stored, a warning); lessons is None for a folder outside git, which is no problem.
    """
    try:
        root = await repo_root(folder)
    except HippoError:
        return None, None
    try:
        result = await learn_from_git(ctx.state, store, [root], days, tenant=ctx.tenant, actor=ctx.actor)
    except HippoError as exc:
        # A repository with no commits yet, or a git that times out, must not fail init.
        return 0, f"learned nothing from git in {root}: {exc.message}"
    return len(result.lessons), None


async def import_notes(ctx: RequestContext, folder: str) -> tuple[int, list[str]]:
    """The agent notes seen from `folder` (the user's into global, the project's into its store)."""
    report = await import_project(ctx.state, folder, ctx.request.env, tenant=ctx.tenant, actor=ctx.actor)
    return sum(t.added + t.replaced for t in report.tools), report.warnings


async def import_user_notes(ctx: RequestContext) -> int:
    """The user-level agent notes into the global store."""
    registry = ctx.state.registry
    global_store = sqlite_only(await registry.open(registry.global_root), ctx.verb)
    return await import_store(ctx.state, global_store, ctx.request.env)


def find_repos(folder: str, depth: int = SCAN_DEPTH) -> list[str]:
    """Git repositories at depth 0-`depth` below `folder`, sorted.

    A folder holding `.git` is a repository and is not descended into; folders whose name starts
    with `.` and `node_modules` are skipped; unreadable folders are passed over.
    """
    found: list[str] = []

    def walk(path: str, level: int) -> None:
        if os.path.exists(os.path.join(path, ".git")):
            found.append(path)
            return
        if level >= depth:
            return
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.name.startswith(".") or entry.name in SCAN_SKIP:
                continue
            if entry.is_dir(follow_symlinks=False):
                walk(entry.path, level + 1)

    walk(os.path.realpath(folder), 0)
    return found


def skip_integrations(env: Mapping[str, str]) -> bool:
    """HIPPO_SKIP_AUTO_INTEGRATIONS=1 in the request's environment turns off agent wiring."""
    return env.get("HIPPO_SKIP_AUTO_INTEGRATIONS", "").strip() == "1"


def project_store_root(folder: str) -> str:
    return os.path.realpath(os.path.join(folder, PROJECT_DIR))
