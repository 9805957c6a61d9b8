"""Reading and editing a hooks file in Claude Code's shape (`settings.json`, Codex's `hooks.json`):
`{"hooks": {<event>: [{"matcher"?: str, "hooks": [{"type": "command", "command": str, ...}]}]}}`.

Everything else in the file is kept as it is, in its own layout (jsonedit.py): only the entries
hippod adds or removes change, so an install followed by an uninstall gives back the file byte for
byte. Entries and hook objects of any other shape are not ours and are never touched.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hippod.integrations import files, installed, jsonedit
from hippod.integrations.commands import HookSpec
from hippod.integrations.report import Report

Json = dict[str, Any]


class SettingsError(Exception):
    """The file is not JSON hippod can merge into; it is left exactly as it is."""


def parse(path: str, text: str) -> Any:
    """The JSON in a file's text (a leading byte-order mark allowed); SettingsError names the file and
    where the text stops being JSON."""
    try:
        return json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise SettingsError(f"{path} is not valid JSON ({exc.msg} at {where})") from None


def load(path: str) -> tuple[Json, str | None]:
    """The parsed file and its text (None when it does not exist, which reads as `{}`)."""
    try:
        text = files.read_text(path)
    except files.Unreadable as exc:
        raise SettingsError(str(exc)) from None
    if text is None:
        return {}, None
    data = parse(path, text)
    if not isinstance(data, dict):
        raise SettingsError(f"{path} does not hold a JSON object")
    hooks = data.get("hooks")
    if hooks is not None and (
        not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values())
    ):
        raise SettingsError(f'{path}: its "hooks" key is not an object of arrays')
    return data, text


def dump(data: Json) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def save(path: str, data: Json, old_text: str | None, *, global_root: str, backup: bool = True) -> bool:
    """Write `data` unless the file already holds that JSON (a file with nothing to change stays byte
    for byte); an existing file keeps its layout. True when it was written."""
    if old_text is not None and jsonedit.same(parse(path, old_text), data):
        return False
    text = dump(data) if old_text is None else jsonedit.render(old_text, data)
    files.write_atomic(path, text, global_root=global_root, backup=backup)
    return True


def hook_objects(hooks: Json, event: str) -> Iterator[Json]:
    """Every command hook object under `event` (skipping entries and objects of other shapes)."""
    for entry in hooks.get(event) or []:
        if isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
            for hook in entry["hooks"]:
                if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                    yield hook


def commands(hooks: Json, event: str) -> list[str]:
    return [hook["command"] for hook in hook_objects(hooks, event)]


def strip(hooks: Json, event: str, drop: Callable[[str], bool]) -> list[str]:
    """Remove the hook objects under `event` whose command `drop` picks (see strip_hooks)."""
    return strip_hooks(hooks, event, lambda hook: drop(hook["command"]))


def strip_hooks(hooks: Json, event: str, drop: Callable[[Json], bool]) -> list[str]:
    """Remove the command hook objects under `event` that `drop` picks; an entry left with no hook
    goes, and so does the event once its array is empty. Returns the removed commands."""
    removed: list[str] = []
    entries = hooks.get(event)
    if not entries:
        return removed
    kept_entries = []
    for entry in entries:
        if not (isinstance(entry, dict) and isinstance(entry.get("hooks"), list)):
            kept_entries.append(entry)
            continue
        kept = []
        for hook in entry["hooks"]:
            if isinstance(hook, dict) and isinstance(hook.get("command"), str) and drop(hook):
                removed.append(hook["command"])
            else:
                kept.append(hook)
        if kept or not entry["hooks"]:
            entry["hooks"] = kept
            kept_entries.append(entry)
    if removed:
        if kept_entries:
            hooks[event] = kept_entries
        else:
            del hooks[event]
    return removed


def new_entry(spec: HookSpec, command: str, **extra: str) -> Json:
    """`{"matcher"?, "hooks": [{"type": "command", "command", <extra>, "timeout"}]}`."""
    hook: Json = {"type": "command", "command": command, **extra, "timeout": spec.timeout}
    entry: Json = {} if spec.matcher is None else {"matcher": spec.matcher}
    entry["hooks"] = [hook]
    return entry


def append(data: Json, event: str, entry: Json) -> None:
    """Add an entry at the end of `event`'s array, creating `hooks` (also in place of a `null` one)
    and the array as needed."""
    hooks = data.get("hooks")
    if hooks is None:
        hooks = data["hooks"] = {}
    hooks.setdefault(event, []).append(entry)


def settle(data: Json, spec: HookSpec, command: str, where: str, report: Report, **extra: str) -> None:
    """Leave exactly one hook object with `command` under the entry's event: an older form of it
    (commands.py) becomes the current command in place, with the entry's timeout and `extra` keys;
    with neither, a new entry is appended; further copies go."""
    hooks = data.get("hooks") or {}
    objects = list(hook_objects(hooks, spec.event))
    current = [h for h in objects if h["command"] == command]
    older = [h for h in objects if h["command"] != command and spec.owns(h["command"])]
    if not current and older:
        kept = older.pop(0)
        old = kept["command"]
        report.lines.append(f"Replaced {old} with {command} ({spec.event}) in {where}")
        kept.update(command=command, **extra, timeout=spec.timeout)
    elif not current:
        append(data, spec.event, new_entry(spec, command, **extra))
        report.lines.append(f"Installed {command} {spec.event} hook in {where}")
    # Picked by object, not by command: the copy that stays has the very same command string.
    copies = {id(h) for h in older} | {id(h) for h in current[1:]}
    if copies:
        for old in strip_hooks(data["hooks"], spec.event, lambda h: id(h) in copies):
            report.lines.append(f"Removed duplicate {old} ({spec.event}) from {where}")


def _ours(spec: HookSpec, recorded: set[str | None]) -> Callable[[str], bool]:
    """Picks the entry's current command under any hippoctl prefix, its older forms, and a recorded
    command for the same verb (whatever prefix it was installed with)."""
    owned = {c for c in recorded if c is not None and spec.suffix and c.endswith(" " + spec.suffix)}
    return lambda command: spec.owns(command) or command in owned


def _without_ours(
    data: Json, specs: tuple[HookSpec, ...], recorded: set[str | None]
) -> tuple[Json, list[str]]:
    """A copy of `data` without hippod's hook objects for `specs` (entries and event arrays left empty
    go, and so does a `hooks` object that became empty), and the events and commands removed."""
    data = copy.deepcopy(data)
    removed: list[str] = []
    hooks = data.get("hooks")
    if isinstance(hooks, dict) and hooks:
        for spec in specs:
            removed += [f"{old} {spec.event}" for old in strip(hooks, spec.event, _ours(spec, recorded))]
        if not hooks:
            del data["hooks"]
    return data, removed


def _bare(data: Json) -> Json:
    """`data` without empty event arrays or an empty `hooks` object, which hold nothing of anyone's."""
    data = copy.deepcopy(data)
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for event in [event for event, entries in hooks.items() if entries == []]:
            del hooks[event]
    if not data.get("hooks", True):
        del data["hooks"]
    return data


def _read_backup(path: str) -> tuple[str, Any] | None:
    try:
        text = files.read_text(path)
        return None if text is None else (text, parse(path, text))
    except (files.Unreadable, SettingsError):
        return None


def _put_back(
    path: str, result: Json, old_text: str, ours: Callable[[Json], tuple[Json, list[str]]], global_root: str
) -> str | None:
    """Write the file without hippod's entries, as close to the user's own as can be: the backup's very
    bytes when nothing else changed since, no file at all when it holds nothing of the user's, else
    the file in its own layout. Returns a line to report when the file was removed."""
    backup = files.existing_backup(path, global_root)
    kept = None if backup is None else _read_backup(backup)
    if kept is not None and isinstance(kept[1], dict):
        pristine, ours_in_backup = ours(kept[1])
        if not ours_in_backup and jsonedit.same(_bare(pristine), _bare(result)):
            files.write_atomic(path, kept[0], backup=False)
            files.forget_backup(path, global_root)
            return None
        # A backup that held only hippod's entries: the file was hippod's from the start.
        created = bool(ours_in_backup) and _bare(pristine) == {}
    else:
        created = backup is None
    if created and result == {}:
        os.unlink(path)
        files.forget_backup(path, global_root)
        return f"Removed {path}, which held only hippod's entries"
    # The file is hippod's edit of the user's by now: a backup of it would keep nothing of theirs.
    save(path, result, old_text, global_root=global_root, backup=False)
    return None


def uninstall(path: str, specs: tuple[HookSpec, ...], *, target: str, where: str, global_root: str) -> Report:
    """Remove hippod's hook objects for `specs` from the file: the current command under any hippoctl
    prefix, its older forms, and the commands installed.json records for `target` there. Entries and
    event arrays left empty go, and so does a `hooks` object this emptied; nothing else changes
    (_put_back). SettingsError, with nothing changed, when the file is not JSON hippod can edit."""
    report = Report()
    records = installed.load(global_root)
    recorded = {r.command for r in records if r.target == target and r.kind == "hook" and r.file == path}
    data, old_text = load(path)
    result, removed = _without_ours(data, specs, recorded)
    report.lines += [f"Removed {what} hook from {where}" for what in removed]
    if removed and old_text is not None:
        gone = _put_back(path, result, old_text, lambda d: _without_ours(d, specs, recorded), global_root)
        if gone is not None:
            report.lines.append(gone)
    installed.remove(global_root, lambda r: r.target == target and r.kind == "hook" and r.file == path)
    return report


@dataclass
class Status:
    """What a hooks file holds of hippod's entries (read-only)."""

    path: str
    error: str | None = None  # why the file cannot be read as a hooks file
    present: list[HookSpec] = field(default_factory=list)
    missing: list[HookSpec] = field(default_factory=list)
    duplicated: list[HookSpec] = field(default_factory=list)
    outdated: list[str] = field(default_factory=list)  # older forms still in the file

    @property
    def state(self) -> str:
        if self.error is not None:
            return "edited"
        if not self.present and not self.outdated:
            return "absent"
        if self.missing or self.duplicated or self.outdated:
            return "outdated"
        return "installed"


def status(
    path: str, specs: tuple[HookSpec, ...], prefix: str, *, retired: tuple[HookSpec, ...] = ()
) -> Status:
    """Which of `specs` are present (with `prefix`), missing, duplicated or in an older form; the
    `retired` entries only ever count as older forms."""
    result = Status(path)
    try:
        data, _ = load(path)
    except SettingsError as exc:
        result.error = str(exc)
        return result
    hooks = data.get("hooks") or {}
    for spec in specs:
        command = spec.command(prefix)
        found = commands(hooks, spec.event)
        count = found.count(command)
        (result.present if count else result.missing).append(spec)
        if count > 1:
            result.duplicated.append(spec)
        result.outdated += [c for c in found if c != command and spec.owns(c)]
    for spec in retired:
        result.outdated += [c for c in commands(hooks, spec.event) if spec.owns(c)]
    return result
