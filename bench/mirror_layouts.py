"""What a store's markdown mirrors cost a project that commits them, in three layouts.

The store's own mirrors (hard-linked), or made-up ones in the mirror format, go into `.hippo/` of a
fresh git repo (with hippod's `.hippo/.gitignore`), and `git status` is timed with them untracked,
then `git add` and `git commit`, then `git status` with them committed. The layouts: flat (one file
a memory in its layer folder, as the daemon writes them), sharded (folders of 256 by the id's first
two hex digits) and per-day (LAYOUT_DAY memories a file). Used by scale.py.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import time
from collections.abc import Sequence

from corpus import TEXT_SEED, make_corpus, make_memories
from harness import Sandbox, log

from hippod.mirrors.mirror_heal import FOLDERS
from hippod.store.gitignore import TEXT as GITIGNORE_TEXT

LAYOUT_DAY = 1_000
LAYOUTS = ("flat", "sharded", "per-day")
GIT_TIMEOUT = 3_600.0


GIT_HEADER = (
    f"{'size':>9}  {'layout':<9}  {'inodes':>9}  {'untrack1':>8}  {'untrack2':>8}  {'-uall':>8}"
    f"  {'add':>8}  {'commit':>8}  {'commit1':>8}  {'commit2':>8}  {'.git ino':>9}"
)


def count_inodes(root: str) -> int:
    return sum(1 + len(files) for _, _, files in os.walk(root))


def _timed_git(repo: str, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        ["git", "-C", repo, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        timeout=GIT_TIMEOUT,
    )  # fmt: skip
    return time.perf_counter() - started


def git_costs(repo: str, label: str, size: int) -> str:
    """`git status` untracked, `git add` + `git commit`, `git status` committed, in a repo whose
    `.hippo/` already holds the mirrors. Two runs of each status: the first, then again."""
    untracked = [_timed_git(repo, "status", "--porcelain") for _ in range(2)]
    untracked_all = _timed_git(repo, "status", "--porcelain", "--untracked-files=all")
    add = _timed_git(repo, "add", "-A")
    commit = _timed_git(repo, "commit", "-q", "-m", "mirrors")
    committed = [_timed_git(repo, "status", "--porcelain") for _ in range(2)]
    git_inodes = count_inodes(os.path.join(repo, ".git"))
    mirror_inodes = count_inodes(os.path.join(repo, ".hippo"))
    return (
        f"{size:>9}  {label:<9}  {mirror_inodes:>9}  {untracked[0]:>8.2f}  {untracked[1]:>8.2f}"
        f"  {untracked_all:>8.2f}  {add:>8.1f}  {commit:>8.1f}  {committed[0]:>8.2f}  {committed[1]:>8.2f}"
        f"  {git_inodes:>9}"
    )


def new_repo(path: str) -> str:
    os.makedirs(os.path.join(path, ".hippo"))
    subprocess.run(["git", "init", "-q", path], check=True)
    # No `git gc --auto` after the commit: it would pack the objects in the background while the
    # next steps are timed (and is a cost of its own, not measured here).
    settings = (("user.email", "bench@example.invalid"), ("user.name", "bench"), ("gc.auto", "0"))
    for key, value in (*settings, ("maintenance.auto", "false")):
        subprocess.run(["git", "-C", path, "config", key, value], check=True)
    with open(os.path.join(path, "README.md"), "w", encoding="utf-8") as handle:
        handle.write("A project.\n")
    with open(os.path.join(path, ".hippo", ".gitignore"), "w", encoding="utf-8") as handle:
        handle.write(GITIGNORE_TEXT)
    subprocess.run(["git", "-C", path, "add", "-A"], check=True)
    subprocess.run(["git", "-C", path, "commit", "-q", "-m", "start"], check=True)
    return path


def of_store(sb: Sandbox, size: int, layouts: bool) -> list[str]:
    """The git costs of the store's mirrors as they are, and with `layouts` of the two others."""
    flat = new_repo(os.path.join(sb.base, "proj-flat"))
    for folder in FOLDERS:
        source = os.path.join(sb.home, folder)
        if os.path.isdir(source):
            subprocess.run(["cp", "-al", source, os.path.join(flat, ".hippo", folder)], check=True)
    rows = [git_costs(flat, "flat", size) + "  (hard links)"]
    if not layouts:
        return rows
    texts: list[tuple[str, str, bytes]] = []
    for folder in FOLDERS:
        source = os.path.join(flat, ".hippo", folder)
        for name in os.listdir(source) if os.path.isdir(source) else []:
            with open(os.path.join(source, name), "rb") as handle:
                texts.append((folder, name, handle.read()))
    texts.sort()
    shutil.rmtree(flat)
    return rows + time_layouts(sb.base, size, texts, LAYOUTS)


def time_layouts(
    base: str, size: int, texts: list[tuple[str, str, bytes]], labels: Sequence[str]
) -> list[str]:
    """Write the mirror texts in each layout into a fresh repo's `.hippo/`, then time git there."""
    rows: list[str] = []
    for label in labels:
        repo = new_repo(os.path.join(base, f"proj-{label}"))
        started = time.perf_counter()
        written = _write_layout(os.path.join(repo, ".hippo"), label, texts)
        took = time.perf_counter() - started
        rows.append(git_costs(repo, label, size) + f"  ({written} files written in {took:.1f} s)")
        log(f"size {size}: layout {label} done")
        shutil.rmtree(repo)
    return rows


MIRROR_TEMPLATE = """---
id: {id}
created: 2026-12-03T08:12:44.120Z
last_retrieved: null
retrieval_count: 0
strength: 1.0
half_life_days: 7
layer: episodic
tags: [imported, section-{section}]
emotional_valence: neutral
schema_fit: 0.5
source: import
outcome_positive: 0
outcome_negative: 0
conflicts_with: []
pinned: false
confidence: observed
parents: []
kind: distilled
scope: null
owner: null
artifact_ref: null
superseded_by: null
---

{content}
"""


def synthetic_mirrors(size: int, section_size: int) -> list[tuple[str, str, bytes]]:
    """`size` episodic mirrors in the mirror format (memory-model.md §3), the corpus's texts, tagged
    by section as an import of `section_size` bullets a heading tags them."""
    rng = random.Random(size)
    items = make_memories(make_corpus(), size, TEXT_SEED + size)
    texts = []
    for n, (content, _) in enumerate(items):
        memory_id = f"mem_{rng.getrandbits(48):012x}"
        text = MIRROR_TEMPLATE.format(id=memory_id, section=n // section_size, content=content)
        texts.append(("episodic", f"{memory_id}.md", text.encode()))
    texts.sort()
    return texts


def _write_layout(root: str, label: str, texts: list[tuple[str, str, bytes]]) -> int:
    """Write the mirror texts: one file each in its layer folder (flat), one each under a folder of
    the id's first two hex digits (sharded), or LAYOUT_DAY memories a file (per-day)."""
    written = 0
    if label == "per-day":
        for start in range(0, len(texts), LAYOUT_DAY):
            day = texts[start : start + LAYOUT_DAY]
            folder = os.path.join(root, day[0][0])
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"day-{start // LAYOUT_DAY:05d}.md"), "wb") as handle:
                handle.write(b"\n".join(text for _, _, text in day))
            written += 1
        return written
    for folder, name, text in texts:
        parts = [root, folder] + ([name.removeprefix("mem_")[:2]] if label == "sharded" else [])
        target = os.path.join(*parts)
        if not os.path.isdir(target):
            os.makedirs(target)
        with open(os.path.join(target, name), "wb") as handle:
            handle.write(text)
        written += 1
    return written
