"""The commands of hippod's that agent hosts run, as installed (integrations.md §12): every hook
command of ours in Claude Code's settings.json and Codex's hooks.json, under any hippoctl prefix, and
the argument lists in a marked OpenCode plugin. Read-only; `doctor`'s client half runs each one the
way its host would.

The original hippo's commands (`hippo …`) are not listed: they start another program, which doctor
has no business running, and the agent checks already report them as older forms.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping

from hippoctl.protocol.replies_doctor import HookCommand
from hippod.integrations import claude, codex, files, hookjson, opencode
from hippod.integrations.commands import (
    CLAUDE_HOOKS,
    CODEX_HOOKS,
    HookSpec,
    is_hippoctl_prefix,
    is_hippod_form,
    starts_hippoctl,
)

# A JSON array of strings on one line: how the plugin holds each command (opencode.plugin_source).
_STRING_ARRAY = re.compile(r'\[\s*"(?:[^"\\\n]|\\.)*"(?:\s*,\s*"(?:[^"\\\n]|\\.)*")*\s*\]')


def _fix(target: str) -> str:
    return f"hippoctl hook install {target}"


def _entry_name(host: str, spec: HookSpec) -> str:
    return f"{host} {spec.event}" + (f" ({spec.matcher})" if spec.matcher else "")


def _from_hooks_file(path: str, specs: tuple[HookSpec, ...], host: str, target: str) -> list[HookCommand]:
    """Our hook commands in a settings.json / hooks.json; none when the file is unreadable (the
    agent checks report that)."""
    try:
        data, _ = hookjson.load(path)
    except hookjson.SettingsError:
        return []
    hooks = data.get("hooks") or {}
    return [
        HookCommand(entry=_entry_name(host, spec), command=command, fix=_fix(target))
        for spec in specs
        for command in hookjson.commands(hooks, spec.event)
        if is_hippod_form(command, spec.suffix)
    ]


def plugin_argvs(text: str) -> list[list[str]]:
    """The argument lists in a plugin's text that start hippoctl (its path, or `<python> -m hippoctl`)."""
    found: list[list[str]] = []
    for match in _STRING_ARRAY.finditer(text):
        try:
            words = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if starts_hippoctl(words) and words not in found:
            found.append(words)
    return found


def _from_plugin(env: Mapping[str, str]) -> list[HookCommand]:
    path = opencode.plugin_path(env)
    try:
        text = files.read_text(path)
    except files.Unreadable:
        return []
    if text is None or not text.lstrip().startswith(opencode.MARKER_STEM):
        return []
    commands = []
    for argv in plugin_argvs(text):
        verb = (argv[1:] if is_hippoctl_prefix(argv[:1]) else argv[3:])[0]
        # The plugin starts the list without a shell; sh reads the quoted, joined line as the same words.
        command = shlex.join(argv)
        commands.append(HookCommand(entry=f"OpenCode plugin {verb}", command=command, fix=_fix("opencode")))
    return commands


def installed(env: Mapping[str, str]) -> list[HookCommand]:
    """Claude Code's, Codex's and the OpenCode plugin's commands of ours, in that order."""
    found = _from_hooks_file(claude.settings_path(env), CLAUDE_HOOKS, "Claude Code", claude.TARGET)
    if codex.home_exists(env):
        found += _from_hooks_file(codex.hooks_path(env), CODEX_HOOKS, "Codex", codex.TARGET)
    return found + _from_plugin(env)
