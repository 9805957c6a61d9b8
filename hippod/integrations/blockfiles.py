"""Installing and removing a target's instruction block in a project's files, with its
installed.json records (integrations.md §4, §8 rule 1).

One AGENTS.md block serves every AGENTS.md reader: each target that installs it gets its own record,
and uninstall removes the block only once no other target's record for that file is left.
"""

from __future__ import annotations

import os

from hippod.integrations import blocks, files, installed
from hippod.integrations.report import Report

FILES = {blocks.CLAUDE: "CLAUDE.md", blocks.AGENTS: "AGENTS.md"}
LEGACY_CURSOR_FILE = ".cursorrules"


def locate(project: str, variant: str) -> tuple[str, str]:
    """(path, variant) of the project's instruction file for `variant`'s block.

    A CLAUDE.md and an AGENTS.md that are one file (one links to the other, as many projects do)
    are both AGENTS.md with its block, which serves every reader, Claude Code included: the
    installs for either then agree on one block and one set of records, instead of swapping the
    two blocks on every run.
    """
    claude, agents = (os.path.join(project, FILES[kind]) for kind in (blocks.CLAUDE, blocks.AGENTS))
    try:
        if os.path.samefile(claude, agents):
            return agents, blocks.AGENTS
    except OSError:  # either one missing
        pass
    return os.path.join(project, FILES[variant]), variant


def block_files(project: str) -> list[tuple[str, str]]:
    """(path, variant) of the project's CLAUDE.md and AGENTS.md, once each (one, when they are one
    file)."""
    return list(dict.fromkeys(locate(project, k) for k in (blocks.CLAUDE, blocks.AGENTS)))


def _edited(path: str) -> str:
    return f"edited hippo block in {path} left alone"


def _block_records(global_root: str, path: str) -> list[installed.Record]:
    return [r for r in installed.load(global_root) if r.kind == "block" and r.file == path]


def _patch(path: str, variant: str, prefix: str, report: Report) -> tuple[str, str, str] | None:
    """(old text, patched text, outcome) for an existing file; an edited block is reported."""
    text = files.read_or_warn(path, report)
    if text is None:
        return None
    new_text, outcome = blocks.patched(text, variant, prefix)
    if outcome == "edited":
        report.warnings.append(_edited(path))
    return text, new_text, outcome


def install(target: str, path: str, variant: str, prefix: str, *, global_root: str) -> Report:
    """Add or update the block in an existing file, its commands started by `prefix`
    (blocks.block_prefix); an edited block is reported and left alone."""
    report = Report()
    patch = _patch(path, variant, prefix, report)
    if patch is None or patch[2] == "edited":
        return report
    text, new_text, outcome = patch
    if new_text != text:
        files.write_atomic(path, new_text, global_root=global_root)
        verb = "Installed" if outcome == "added" else "Updated"
        report.lines.append(f"{verb} {target} block in {path}")
    current = blocks.digest(blocks.current_body(variant, prefix))
    installed.add(global_root, installed.Record(target=target, kind="block", file=path, digest=current))
    return report


def uninstall(target: str, path: str, *, global_root: str) -> Report:
    """Remove the block when this target installed it, no other target still has it, and it is
    unedited; drops this target's record either way."""
    report = Report()
    records = _block_records(global_root, path)
    mine = [r for r in records if r.target == target]
    others = sorted({r.target for r in records if r.target != target})
    installed.remove(global_root, lambda r: r.kind == "block" and r.file == path and r.target == target)
    text = files.read_or_warn(path, report)
    if text is None or blocks.find(text) is None:
        return report
    if others:
        report.lines.append(f"Kept the hippo block in {path} for {', '.join(others)}")
        return report
    if not mine:
        report.warnings.append(f"hippo block in {path} kept: {target} did not install it")
        return report
    new_text, outcome = blocks.without(text)
    if outcome == "edited":
        report.warnings.append(_edited(path))
    elif new_text != text:
        files.write_atomic(path, new_text, global_root=global_root, backup=False)
        report.lines.append(f"Removed hippo block from {path}")
        _forget_backup_if_restored(path, new_text, global_root)
    return report


def _forget_backup_if_restored(path: str, text: str, global_root: str) -> None:
    """Drop the file's backup once the file is exactly what the backup kept."""
    backup = files.existing_backup(path, global_root)
    try:
        kept = None if backup is None else files.read_text(backup)
    except files.Unreadable:
        return
    if kept == text:
        files.forget_backup(path, global_root)


def refresh(path: str, variant: str, prefix: str, *, global_root: str) -> Report:
    """Replace an older unedited block with the current one and update its records' digests."""
    report = Report()
    patch = _patch(path, variant, prefix, report)
    if patch is None or patch[2] != "updated":
        return report
    files.write_atomic(path, patch[1], global_root=global_root)
    report.lines.append(f"Updated hippo block in {path}")
    current = blocks.digest(blocks.current_body(variant, prefix))
    for record in _block_records(global_root, path):
        record.digest = current
        installed.add(global_root, record)
    return report


def clean_cursorrules(project: str, *, global_root: str) -> Report:
    """Remove the block older versions wrote into `.cursorrules` (never written now); a file left
    empty goes too."""
    report = Report()
    path = os.path.join(project, LEGACY_CURSOR_FILE)
    text = files.read_or_warn(path, report)
    if text is None:
        return report
    new_text, outcome = blocks.without(text)
    if outcome == "edited":
        report.warnings.append(_edited(path))
    if outcome != "removed":
        return report
    if new_text.strip():
        files.write_atomic(path, new_text, global_root=global_root)
    else:
        files.remove(path, global_root)
    report.lines.append(f"Removed legacy hippo block from {path}")
    return report
