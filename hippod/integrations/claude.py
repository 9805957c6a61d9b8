"""Claude Code's seven hook entries in `<claude home>/settings.json` (integrations.md §3, §8).

Install adds an entry only where no hook object under its event already has exactly the command,
turns an older form of it (commands.py) into the current command in place, and drops further
copies; uninstall removes hippod's own hook objects (current and older forms) and nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hippod.integrations import homes, hookjson, installed
from hippod.integrations.commands import CLAUDE_HOOKS, LEGACY_STOP
from hippod.integrations.report import Report

TARGET = "claude-code"


def settings_path(env: Mapping[str, str]) -> str:
    return os.path.join(homes.claude_home(env), "settings.json")


def _record(path: str, command: str) -> installed.Record:
    return installed.Record(target=TARGET, kind="hook", file=path, command=command)


def install(prefix: str, *, global_root: str, env: Mapping[str, str]) -> Report:
    """The seven entries, with `prefix` starting each command; hookjson.SettingsError, with nothing
    changed, when settings.json is not JSON hippod can edit."""
    report = Report()
    path = settings_path(env)
    data, old_text = hookjson.load(path)
    hooks = data.get("hooks") or {}
    for old in hookjson.strip(hooks, LEGACY_STOP.event, LEGACY_STOP.owns):
        report.lines.append(f"Removed legacy {old} Stop hook from claude-code settings")
    for spec in CLAUDE_HOOKS:
        hookjson.settle(data, spec, spec.command(prefix), "claude-code settings", report)
    hookjson.save(path, data, old_text, global_root=global_root)
    for spec in CLAUDE_HOOKS:
        installed.add(global_root, _record(path, spec.command(prefix)))
    return report


def uninstall(*, global_root: str, env: Mapping[str, str]) -> Report:
    """Remove hippod's hook objects, current and older forms (hookjson.uninstall); SettingsError when
    settings.json is not JSON hippod can edit."""
    specs = (*CLAUDE_HOOKS, LEGACY_STOP)
    return hookjson.uninstall(
        settings_path(env), specs, target=TARGET, where="claude-code settings", global_root=global_root
    )


def status(prefix: str, env: Mapping[str, str]) -> hookjson.Status:
    """Read-only: which of the seven entries are present, missing, duplicated or in an older form."""
    return hookjson.status(settings_path(env), CLAUDE_HOOKS, prefix, retired=(LEGACY_STOP,))
