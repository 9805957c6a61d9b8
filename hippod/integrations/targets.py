"""The agent hosts hippod wires, and the one entry point per action on them (integrations.md §1, §3-§8).

`init`, `setup`, `hook` and `doctor` call these; the per-host work is in blockfiles.py (CLAUDE.md and
AGENTS.md), claude.py, codex.py and opencode.py.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hippoctl.protocol.messages import HOOK_TARGETS as TARGETS
from hippoctl.protocol.replies_doctor import Check, HookCommand
from hippoctl.protocol.replies_hooks_install import HookFile, HookTarget
from hippoctl.protocol.wording import plural
from hippod.integrations import (
    agent_checks,
    blockfiles,
    blocks,
    claude,
    codex,
    files,
    homes,
    hookjson,
    opencode,
)
from hippod.integrations.report import Report

__all__ = ["TARGETS"]

# What marks each target in a project folder (§1's "Detected by (in cwd)").
_DETECTED_BY = {
    "claude-code": ("CLAUDE.md", os.path.join(".claude", "settings.json")),
    "codex": ("AGENTS.md", ".codex"),
    "cursor": ("AGENTS.md",),
    "openclaw": (".openclaw", "AGENTS.md"),
    "opencode": (".opencode", "opencode.json"),
    "pi": (".pi", os.path.join(".pi", "agent")),
}


def variant(target: str) -> str:
    """Which instruction file the target reads: CLAUDE.md for Claude Code, AGENTS.md for the rest."""
    return blocks.CLAUDE if target == "claude-code" else blocks.AGENTS


def detect(project: str, env: Mapping[str, str]) -> list[str]:
    """The targets detected in a project folder, by integrations.md §1's table, in TARGETS order; an
    `AGENTS.md` also counts for OpenCode, which reads it, once OpenCode is installed (its home exists)."""
    found = [t for t in TARGETS if any(os.path.exists(os.path.join(project, p)) for p in _DETECTED_BY[t])]
    agents_md = os.path.exists(os.path.join(project, blockfiles.FILES[blocks.AGENTS]))
    if "opencode" not in found and agents_md and opencode.home_exists(env):
        found = [t for t in TARGETS if t in found or t == "opencode"]
    return found


def install_project(target: str, project: str, command: str, *, global_root: str) -> Report:
    """The target's instruction block in the project's CLAUDE.md or AGENTS.md, only if that file
    exists, its commands started as `command` starts the hooks."""
    path, kind = blockfiles.locate(project, variant(target))
    return blockfiles.install(target, path, kind, blocks.block_prefix(command), global_root=global_root)


def check(target: str, env: Mapping[str, str]) -> None:
    """hookjson.SettingsError when the target's machine-level hooks file is there but is not JSON
    hippod can edit: `hook install` and `hook uninstall` then fail before writing anything."""
    if target == "claude-code":
        hookjson.load(claude.settings_path(env))
    elif target == "codex" and codex.home_exists(env):
        hookjson.load(codex.hooks_path(env))


def _unchanged(exc: hookjson.SettingsError, target: str) -> Report:
    report = Report()
    report.warnings.append(f"{exc}; {target} hooks left unchanged")
    return report


def install_user(target: str, command: str, *, global_root: str, env: Mapping[str, str]) -> Report:
    """The target's machine-level wiring: Claude Code's 7 entries, Codex's 2 (when its home exists), the
    OpenCode plugin; nothing for the AGENTS.md-only targets. `command` prefixes every hook command. A
    hooks file that is not JSON is left as it is, with a warning."""
    try:
        if target == "claude-code":
            return claude.install(command, global_root=global_root, env=env)
        if target == "codex":
            return codex.install(command, global_root=global_root, env=env)
    except hookjson.SettingsError as exc:
        return _unchanged(exc, target)
    if target == "opencode":
        return opencode.install(command, None, global_root=global_root, env=env)
    return Report()


def install(target: str, project: str, command: str, *, global_root: str, env: Mapping[str, str]) -> Report:
    """`hook install <target>`: the project's block and the machine-level wiring."""
    report = install_project(target, project, command, global_root=global_root)
    if target == "opencode":
        # Also cleans the project's opencode.json, which install_user has no project for.
        return report.extend(opencode.install(command, project, global_root=global_root, env=env))
    return report.extend(install_user(target, command, global_root=global_root, env=env))


def uninstall(target: str, project: str, *, global_root: str, env: Mapping[str, str]) -> Report:
    """`hook uninstall <target>`: exactly hippod's own entries, and the block where §8 allows."""
    path, _ = blockfiles.locate(project, variant(target))
    report = blockfiles.uninstall(target, path, global_root=global_root)
    try:
        if target == "cursor":
            report.extend(blockfiles.clean_cursorrules(project, global_root=global_root))
        elif target == "claude-code":
            report.extend(claude.uninstall(global_root=global_root, env=env))
        elif target == "codex":
            report.extend(codex.uninstall(global_root=global_root, env=env))
        elif target == "opencode":
            report.extend(opencode.uninstall(project, global_root=global_root, env=env))
    except hookjson.SettingsError as exc:
        report.extend(_unchanged(exc, target))
    return report


def user_home_exists(target: str, env: Mapping[str, str]) -> bool:
    """Whether the target's user-level home exists (setup wires only those)."""
    if target == "claude-code":
        return os.path.isdir(homes.claude_home(env))
    if target == "codex":
        return codex.home_exists(env)
    if target == "opencode":
        return opencode.home_exists(env)
    return False


def user_wiring_state(target: str, command: str, env: Mapping[str, str]) -> str:
    """`installed`, `outdated`, `edited` or `absent`: the target's machine-level wiring (read-only)."""
    if target == "claude-code":
        return claude.status(command, env).state
    if target == "codex":
        return codex.status(command, env).state
    if target == "opencode":
        return opencode.plugin_state(command, env)
    return "absent"


def refresh_blocks(project: str, command: str, *, global_root: str) -> Report:
    """Replace unedited older blocks in a project's CLAUDE.md / AGENTS.md with the current ones,
    their commands started as `command` starts the hooks."""
    report = Report()
    prefix = blocks.block_prefix(command)
    for path, kind in blockfiles.block_files(project):
        report.extend(blockfiles.refresh(path, kind, prefix, global_root=global_root))
    return report


def outdated_blocks(project: str, command: str) -> list[str]:
    """The project's instruction files whose block refresh_blocks would replace (read-only)."""
    prefix = blocks.block_prefix(command)
    found = []
    for path, kind in blockfiles.block_files(project):
        try:
            text = files.read_text(path)
        except files.Unreadable:
            continue
        if blocks.state(text, kind, prefix) == "outdated":
            found.append(path)
    return found


# --- hook list ------------------------------------------------------------------------------------


def _block_file(path: str, kind: str, command: str) -> tuple[HookFile, bool]:
    try:
        text = files.read_text(path)
    except files.Unreadable as exc:
        return HookFile(kind="block", path=path, state="edited", detail=f"{exc}; left alone"), True
    if text is None:
        return HookFile(kind="block", path=path, state="absent", detail="no such file"), False
    state = blocks.state(text, kind, blocks.block_prefix(command))
    detail = {"absent": "no hippo block", "edited": "edited by hand; left alone"}.get(state, "")
    return HookFile(kind="block", path=path, state=state, detail=detail), True


def _hooks_file(status: hookjson.Status) -> tuple[HookFile, bool]:
    total = len(status.present) + len(status.missing)
    parts = [status.error or f"{len(status.present)} of {plural(total, 'entry')}"]
    if status.duplicated:
        parts.append(f"{len(status.duplicated)} duplicated")
    if status.outdated:
        parts.append(f"{len(status.outdated)} in an older form")
    return HookFile(kind="hooks", path=status.path, state=status.state, detail=", ".join(parts)), True


def _codex_file(command: str, env: Mapping[str, str]) -> tuple[HookFile, bool]:
    if not codex.home_exists(env):
        path = codex.hooks_path(env)
        return HookFile(kind="hooks", path=path, state="absent", detail="Codex home not found"), False
    return _hooks_file(codex.status(command, env))


def _opencode_files(project: str, command: str, env: Mapping[str, str]) -> list[tuple[HookFile, bool]]:
    path = opencode.plugin_path(env)
    state = opencode.plugin_state(command, env)
    counts = state != "absent" or opencode.home_exists(env)
    detail = {"edited": "no hippod marker: the user's file", "absent": "no plugin"}.get(state, "")
    found = [(HookFile(kind="plugin", path=path, state=state, detail=detail), counts)]
    for config in opencode.config_paths(project, env):
        if opencode.stray_hooks(config):
            stray = HookFile(kind="config", path=config, state="outdated", detail="stray hooks key")
            found.append((stray, True))
    return found


def _overall(found: list[tuple[HookFile, bool]]) -> str:
    states = {f.state for f, counts in found if counts}
    if not states or states == {"absent"}:
        return "absent"
    if states == {"installed"}:
        return "installed"
    return "edited" if "edited" in states else "outdated"


def status(target: str, project: str, command: str, *, env: Mapping[str, str]) -> HookTarget:
    """`hook list`'s row for one target (read-only)."""
    found = [_block_file(*blockfiles.locate(project, variant(target)), command)]
    if target == "claude-code":
        found.append(_hooks_file(claude.status(command, env)))
    elif target == "codex":
        found.append(_codex_file(command, env))
    elif target == "opencode":
        found += _opencode_files(project, command, env)
    elif target == "cursor":
        legacy = os.path.join(project, blockfiles.LEGACY_CURSOR_FILE)
        text = files.read_or_warn(legacy, Report())
        if text is not None and blocks.find(text) is not None:
            copy = HookFile(kind="legacy-block", path=legacy, state="outdated", detail="legacy copy")
            found.append((copy, True))
    return HookTarget(
        target=target,
        detected=target in detect(project, env),
        state=_overall(found),
        files=[f for f, _ in found],
    )


def doctor_checks(
    project: str | None, command: str, *, global_root: str, env: Mapping[str, str]
) -> list[Check]:
    """Claude Code, Codex, OpenCode and Blocks checks of integrations.md §12 (read-only)."""
    found = [] if project is None else detect(project, env)
    return agent_checks.checks(project, command, global_root=global_root, env=env, detected=found)


def doctor_block_commands(
    project: str | None, command: str, *, global_root: str, env: Mapping[str, str]
) -> list[HookCommand]:
    """The commands of the project's hippo blocks that are hippod's own under this client, for
    doctor's client half to run (read-only)."""
    found = [] if project is None else detect(project, env)
    return agent_checks.block_commands(project, command, global_root=global_root, detected=found)
