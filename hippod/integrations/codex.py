"""Codex's two hook entries in `<codex home>/hooks.json`, append-only (integrations.md §5, §8).

Codex keys its trust to each hook as written and asks again about an edited one, so install only
ever appends: it never edits an entry, ours or anyone's. When an older hippod entry for the same
event is there (another prefix, or the original hippo's command) nothing is added; uninstall then
install replaces it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hippod.integrations import homes, hookjson, installed
from hippod.integrations.commands import CODEX_HOOKS, windows_command
from hippod.integrations.report import Report

TARGET = "codex"
TRUST_REMINDER = "Codex runs new hooks only after you trust them once in its /hooks view"
REINSTALL = "hippoctl hook uninstall codex && hippoctl hook install codex"


def hooks_path(env: Mapping[str, str]) -> str:
    return os.path.join(homes.codex_home(env), "hooks.json")


def home_exists(env: Mapping[str, str]) -> bool:
    return os.path.isdir(homes.codex_home(env))


def install(prefix: str, *, global_root: str, env: Mapping[str, str]) -> Report:
    """Append whichever of the two entries is missing; only when Codex's home exists. SettingsError,
    with nothing changed, when hooks.json is not JSON hippod can edit."""
    report = Report()
    if not home_exists(env):
        report.warnings.append(f"Codex home {homes.codex_home(env)} not found; no Codex hooks written")
        return report
    path = hooks_path(env)
    data, old_text = hookjson.load(path)
    for spec in CODEX_HOOKS:
        command = spec.command(prefix)
        found = hookjson.commands(data.get("hooks") or {}, spec.event)
        older = [c for c in found if c != command and spec.owns(c)]
        if command not in found:
            if older:
                report.warnings.append(
                    f"older hippod hook {older[0]} ({spec.event}) in {path} left as it is, since Codex "
                    f"would ask to trust an edited hook again; to replace it: {REINSTALL}"
                )
                continue
            entry = hookjson.new_entry(spec, command, commandWindows=windows_command(prefix, spec.suffix))
            hookjson.append(data, spec.event, entry)
            report.lines.append(f"Installed {command} {spec.event} hook in Codex hooks.json")
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
