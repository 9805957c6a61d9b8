"""Codex's two hook entries in `<codex home>/hooks.json` (integrations.md §5, §8).

Codex keys its trust to each hook as written and asks again about an edited one, so install never
touches anyone else's entry and leaves a current one of ours as it is. An older form of ours (a bare
`hippoctl`, another install's path, the original hippo's command) is replaced in place, as in
Claude Code's settings: such a command runs another client or none at all from Codex's PATH, so
keeping it would keep a hook that cannot start. Codex then asks to trust the replaced entry once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hippod.integrations import homes, hookjson, installed
from hippod.integrations.commands import CODEX_HOOKS, windows_command
from hippod.integrations.report import Report

TARGET = "codex"
TRUST_REMINDER = "Codex runs new hooks only after you trust them once in its /hooks view"


def hooks_path(env: Mapping[str, str]) -> str:
    return os.path.join(homes.codex_home(env), "hooks.json")


def home_exists(env: Mapping[str, str]) -> bool:
    return os.path.isdir(homes.codex_home(env))


def install(prefix: str, *, global_root: str, env: Mapping[str, str]) -> Report:
    """Add whichever of the two entries is missing, an older form of ours turned into it in place;
    only when Codex's home exists. SettingsError, with nothing changed, when hooks.json is not JSON
    hippod can edit."""
    report = Report()
    if not home_exists(env):
        report.warnings.append(f"Codex home {homes.codex_home(env)} not found; no Codex hooks written")
        return report
    path = hooks_path(env)
    data, old_text = hookjson.load(path)
    for spec in CODEX_HOOKS:
        command = spec.command(prefix)
        windows = windows_command(prefix, spec.suffix)
        hookjson.settle(data, spec, command, "Codex hooks.json", report, commandWindows=windows)
        installed.add(global_root, installed.Record(target=TARGET, kind="hook", file=path, command=command))
    hookjson.save(path, data, old_text, global_root=global_root)
    report.warnings.append(TRUST_REMINDER)
    return report


def uninstall(*, global_root: str, env: Mapping[str, str]) -> Report:
    """Remove hippod's hook objects, current and older forms (hookjson.uninstall), nothing else: a
    hooks.json left holding nothing of the user's goes. SettingsError when it is not JSON."""
    return hookjson.uninstall(
        hooks_path(env), CODEX_HOOKS, target=TARGET, where="Codex hooks.json", global_root=global_root
    )


def status(prefix: str, env: Mapping[str, str]) -> hookjson.Status:
    """Read-only: which of the two entries are present, missing or in an older form (all missing,
    without reading anything, when Codex's home does not exist)."""
    path = hooks_path(env)
    if not home_exists(env):
        return hookjson.Status(path, missing=list(CODEX_HOOKS))
    return hookjson.status(path, CODEX_HOOKS, prefix)
