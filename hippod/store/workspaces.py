"""The registry `<global root>/workspaces.json`: the projects the daily run visits (sleep.md §10.1).

The file is `{"version": 1, "workspaces": ["/abs/path", ...]}`: absolute paths with forward slashes,
de-duplicated, sorted, written atomically (temp file + rename). Paths that no longer exist stay listed.
It is read on every use, so a hand edit counts without a restart; only the daemon writes it.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass

from hippod.base.jsonfile import write_object
from hippod.store.roots import DB_NAME, PROJECT_DIR

log = logging.getLogger("hippod.workspaces")

FILE_NAME = "workspaces.json"
VERSION = 1


class RegistryUnreadable(Exception):
    """workspaces.json exists but is not a registry; it is never overwritten then."""


@dataclass(frozen=True, slots=True)
class Workspace:
    """One registered path and what is there now."""

    path: str
    exists: bool
    has_store: bool


def registry_path(global_root: str) -> str:
    return os.path.join(global_root, FILE_NAME)


def normalise(path: str, cwd: str) -> str:
    """The registry form of a directory: absolute (from cwd), symlinks resolved, forward slashes."""
    full = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
    return full.replace("\\", "/")


def tidy(paths: list[str]) -> list[str]:
    """De-duplicated and sorted, as the file keeps them."""
    return sorted({p.replace("\\", "/") for p in paths})


def read(global_root: str) -> list[str]:
    """The registered paths; a missing file is an empty registry, a broken one raises RegistryUnreadable."""
    path = registry_path(global_root)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise RegistryUnreadable(f"{path} is unreadable ({exc.__class__.__name__})") from None
    entries = data.get("workspaces") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise RegistryUnreadable(f"{path} has no list of workspace paths")
    return tidy(entries)


def read_or_empty(global_root: str) -> tuple[list[str], str | None]:
    """The registered paths, or none and a warning when the file is broken (daemon start, daily run)."""
    try:
        return read(global_root), None
    except RegistryUnreadable as exc:
        return [], f"{exc}; using an empty workspace registry"


def write(global_root: str, paths: list[str]) -> None:
    """Replace the registry atomically: a reader sees the old file or the new one, never half of one."""
    write_object(registry_path(global_root), {"version": VERSION, "workspaces": tidy(paths)})


def add(global_root: str, path: str) -> bool:
    """Register a normalised path; False when it was already there (the file is left alone)."""
    paths = read(global_root)
    if path in paths:
        return False
    write(global_root, [*paths, path])
    return True


def remove(global_root: str, path: str) -> bool:
    """Unregister a normalised path; False when it was not registered."""
    paths = read(global_root)
    if path not in paths:
        return False
    write(global_root, [p for p in paths if p != path])
    return True


def register_project(global_root: str, store_root: str, warnings: list[str] | None = None) -> bool:
    """`init`: add the project that owns the store at store_root (`<project>/.hippo`); True when it
    was added, False when it was there already.

    A broken registry is left as it is, logged and reported in `warnings`: `init` itself must still
    succeed.
    """
    project = normalise(os.path.dirname(store_root), "/")
    try:
        return add(global_root, project)
    except (RegistryUnreadable, OSError) as exc:
        log.warning("could not register the workspace of %s: %s", store_root, exc)
        if warnings is not None:
            warnings.append(f"could not register {project} for the daily run: {exc}")
        return False


def store_dir(workspace: str) -> str:
    return os.path.join(workspace, PROJECT_DIR)


def store_roots(global_root: str) -> list[str]:
    """The real paths of the stores the daemon knows of without a request: the global one and each
    registered workspace's, those whose database exists (a broken registry lists none)."""
    paths, _ = read_or_empty(global_root)
    roots = {global_root} | {os.path.realpath(store_dir(p)) for p in paths}
    return sorted(r for r in roots if os.path.isfile(os.path.join(r, DB_NAME)))


def describe(path: str) -> Workspace:
    """What a registered path holds now: missing, a folder without a store, or a workspace with one."""
    exists = os.path.isdir(path)
    return Workspace(path, exists, exists and os.path.isfile(os.path.join(store_dir(path), DB_NAME)))
