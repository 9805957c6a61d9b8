"""The file work of a mirror pass in the per-memory layout (memory-model.md §2), run in a worker
thread: each memory's file written into its layer's folder (and gone from the others), deleted
memories' files removed, stats.json and other files under the store root written or removed."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from hippod.mirrors import mirror_files
from hippod.mirrors.mirror_heal import MEMORY_DIRS
from hippod.mirrors.mirror_text import render
from hippod.model.memory import Memory

log = logging.getLogger("hippod.mirrors")


def write_memories(
    root: str, memories: list[Memory], deleted: list[str], stats: dict[str, object] | None
) -> None:
    """Write these memories' mirrors, remove those of the deleted ids, and write stats.json (unless None)."""
    # One file that cannot be written (a full disk, a planted link) does not stop the rest;
    # healing writes it later.
    failures: list[str] = []
    with mirror_files.Folders(root) as folders:
        for memory in memories:
            for other in MEMORY_DIRS:
                if other != memory.layer:
                    _attempt(failures, folders.remove, f"{other}/{memory.id}.md")
            relative = f"{memory.layer}/{memory.id}.md"
            _attempt(failures, folders.write, relative, render(memory))
        for memory_id in deleted:
            for layer in MEMORY_DIRS:
                _attempt(failures, folders.remove, f"{layer}/{memory_id}.md")
        if stats is not None:
            _attempt(failures, folders.write, "stats.json", json.dumps(stats, indent=2) + "\n")
    _report(root, failures)


def write_files(root: str, files: dict[str, str | None]) -> None:
    """Write (text) or remove (None) files at paths relative to the root."""
    failures: list[str] = []
    with mirror_files.Folders(root) as folders:
        for relative, text in files.items():
            if text is None:
                _attempt(failures, folders.remove, relative)
            else:
                _attempt(failures, folders.write, relative, text)
    _report(root, failures)


def _attempt(failures: list[str], action: Callable[..., object], relative: str, *text: str) -> None:
    try:
        action(relative, *text)
    except OSError as exc:
        failures.append(mirror_files.describe(relative, exc))


def _report(root: str, failures: list[str]) -> None:
    if failures:
        named = "; ".join(sorted(set(failures))[:5])
        log.error("%d mirror files under %s not written: %s", len(failures), root, named)
