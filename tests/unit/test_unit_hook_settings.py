"""Claude Code's settings.json entries (integrations.md §3, §8): merging, legacy migration and
removal, against real files in a temp home."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from e2e.hook_table import CLAUDE_TABLE

from hippod.integrations import claude, commands, files, hookjson, installed

PREFIX = "hippoctl"
USER_HOOKS: dict[str, Any] = {
    "SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye", "timeout": 3}]}],
    "UserPromptSubmit": [
        {"matcher": "", "hooks": [{"type": "command", "command": "hippoctl recall foo"}]},
        {"hooks": [{"type": "command", "command": "say hippo sleep"}]},
    ],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
}
USER_SETTINGS: dict[str, Any] = {"model": "opus", "hooks": USER_HOOKS, "permissions": {"allow": ["Bash(ls)"]}}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home")}


def settings_file(env: dict[str, str]) -> Path:
    return Path(claude.settings_path(env))


def write(env: dict[str, str], data: Any) -> Path:
    path = settings_file(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def ours(prefix: str = PREFIX) -> dict[str, list[dict[str, Any]]]:
    """The seven entries exactly as §3 lists them, grouped by event."""
    out: dict[str, list[dict[str, Any]]] = {}
    for event, matcher, suffix, timeout in CLAUDE_TABLE:
        entry: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        entry["hooks"] = [{"type": "command", "command": f"{prefix} {suffix}", "timeout": timeout}]
        out.setdefault(event, []).append(entry)
    return out


def test_fresh_home_gets_exactly_the_seven_entries(tmp_path: Path, env: dict[str, str]) -> None:
    report = claude.install(PREFIX, global_root=str(tmp_path), env=env)
    text = settings_file(env).read_text()
    assert json.loads(text) == {"hooks": ours()}
    assert text.startswith('{\n  "hooks": {\n    "SessionEnd"')
    assert (
        len(report.lines) == 7
        and report.lines[0] == "Installed hippoctl session-end SessionEnd hook in claude-code settings"
    )
    commands_recorded = {r.command for r in installed.load(str(tmp_path)) if r.kind == "hook"}
    assert commands_recorded == {f"{PREFIX} {suffix}" for _, _, suffix, _ in CLAUDE_TABLE}


def test_user_hooks_and_keys_kept_in_order_and_second_install_is_a_no_op(
    tmp_path: Path, env: dict[str, str]
) -> None:
    path = write(env, USER_SETTINGS)
    claude.install(PREFIX, global_root=str(tmp_path), env=env)
    data = json.loads(path.read_text())
    assert list(data) == ["model", "hooks", "permissions"]
    assert data["permissions"] == USER_SETTINGS["permissions"]
    for event, entries in USER_HOOKS.items():
        assert data["hooks"][event][: len(entries)] == entries  # the user's come first, untouched
    for event, entries in ours().items():
        assert [e for e in data["hooks"][event] if e not in USER_HOOKS.get(event, [])] == entries
    after = path.read_bytes()
    again = claude.install(PREFIX, global_root=str(tmp_path), env=env)
    assert again.lines == [] and path.read_bytes() == after
    backup = Path(files.backup_path(str(path), str(tmp_path)))
    assert backup.read_text() == json.dumps(USER_SETTINGS, indent=2) + "\n"


def test_original_hippo_forms_are_migrated_in_place(tmp_path: Path, env: dict[str, str]) -> None:
    legacy = copy.deepcopy(USER_SETTINGS)
    legacy["hooks"]["SessionEnd"][0]["hooks"].insert(
        0,
        {
            "type": "command",
            "command": 'hippo sleep --log-file "/h/.hippo/logs/claude-code-sleep.log"',
            "timeout": 5,
        },
    )
    legacy["hooks"]["SessionEnd"].append(
        {
            "hooks": [
                {
                    "type": "command",
                    "command": "hippo capture --last-session --log-file /h/x.log",
                    "timeout": 5,
                }
            ]
        }
    )
    legacy["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "hippo sleep"}]}]
    legacy["hooks"]["PostToolUseFailure"] = [
        {"matcher": ".*", "hooks": [{"type": "command", "command": "hippo capture-error", "timeout": 10}]}
    ]
    path = write(env, legacy)
    report = claude.install(PREFIX, global_root=str(tmp_path), env=env)
    hooks = json.loads(path.read_text())["hooks"]
    assert "Stop" not in hooks
    # The first legacy SessionEnd object now runs session-end, beside the user's hook in its entry.
    assert hooks["SessionEnd"] == [
        {
            "hooks": [
                {"type": "command", "command": "hippoctl session-end", "timeout": 5},
                {"type": "command", "command": "echo bye", "timeout": 3},
            ]
        }
    ]
    assert hooks["PostToolUseFailure"] == [
        {"matcher": ".*", "hooks": [{"type": "command", "command": "hippoctl capture-error", "timeout": 5}]}
    ]
    assert "Removed legacy hippo sleep Stop hook from claude-code settings" in report.lines
    assert claude.status(PREFIX, env).state == "installed"


def test_another_hippoctl_prefix_is_replaced_and_duplicates_dropped(
    tmp_path: Path, env: dict[str, str]
) -> None:
    old = "/old/venv/bin/hippoctl session-end"
    data = {
        "hooks": {
            "SessionEnd": [
                {"hooks": [{"type": "command", "command": old, "timeout": 5}]},
                {"hooks": [{"type": "command", "command": "'/usr/bin/python3' -m hippoctl session-end"}]},
            ],
            "PreCompact": [
                {"hooks": [{"type": "command", "command": "hippoctl pre-compact", "timeout": 30}]},
                {"hooks": [{"type": "command", "command": "hippoctl pre-compact", "timeout": 30}]},
            ],
        }
    }
    path = write(env, data)
    before = claude.status(PREFIX, env)
    assert before.duplicated == [commands.PRE_COMPACT] and len(before.outdated) == 2
    claude.install(PREFIX, global_root=str(tmp_path), env=env)
    assert json.loads(path.read_text())["hooks"] == ours()


def test_broken_settings_left_byte_identical(tmp_path: Path, env: dict[str, str]) -> None:
    for text in ('{"hooks": {', "[1, 2]\n", '{"hooks": []}\n', '{"hooks": {"SessionEnd": {}}}\n'):
        path = settings_file(env)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        with pytest.raises(hookjson.SettingsError, match=re.escape(str(path))):
            claude.install(PREFIX, global_root=str(tmp_path), env=env)
        assert path.read_text() == text
        with pytest.raises(hookjson.SettingsError):
            claude.uninstall(global_root=str(tmp_path), env=env)
        assert path.read_text() == text
        assert claude.status(PREFIX, env).state == "edited"


def test_uninstall_removes_only_hippods_entries(tmp_path: Path, env: dict[str, str]) -> None:
    mixed = copy.deepcopy(USER_SETTINGS)
    # A user's hook sharing an entry with an older hippo form: only the hippo object goes.
    mixed["hooks"]["PreCompact"] = [
        {
            "hooks": [
                {"type": "command", "command": "hippo pre-compact --log-file /x"},
                {"type": "command", "command": "backup.sh"},
            ]
        }
    ]
    path = write(env, mixed)
    claude.install("'/opt/py' -m hippoctl", global_root=str(tmp_path), env=env)
    report = claude.uninstall(global_root=str(tmp_path), env=env)
    expected = copy.deepcopy(USER_SETTINGS)
    expected["hooks"]["PreCompact"] = [{"hooks": [{"type": "command", "command": "backup.sh"}]}]
    assert json.loads(path.read_text()) == expected
    assert len(report.lines) == 7
    assert [r for r in installed.load(str(tmp_path)) if r.kind == "hook"] == []


def test_uninstall_of_only_our_hooks_drops_the_emptied_hooks_key(tmp_path: Path, env: dict[str, str]) -> None:
    path = write(env, {"theme": "dark"})
    claude.install(PREFIX, global_root=str(tmp_path), env=env)
    claude.uninstall(global_root=str(tmp_path), env=env)
    assert json.loads(path.read_text()) == {"theme": "dark"}


def test_uninstall_removes_a_recorded_command_with_any_prefix(tmp_path: Path, env: dict[str, str]) -> None:
    odd = "/opt/tools/run-hippo last-sleep"
    path = write(env, {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": odd}]}]}})
    assert not commands.LAST_SLEEP.owns(odd)
    installed.add(
        str(tmp_path), installed.Record(target="claude-code", kind="hook", file=str(path), command=odd)
    )
    claude.uninstall(global_root=str(tmp_path), env=env)
    assert not path.exists()  # it held nothing but hippod's entry


def test_uninstall_without_a_file_creates_none(tmp_path: Path, env: dict[str, str]) -> None:
    assert claude.uninstall(global_root=str(tmp_path), env=env).lines == []
    assert not settings_file(env).exists()


@pytest.mark.parametrize(
    ("command", "spec", "owned"),
    [
        ("hippoctl session-end", commands.SESSION_END, True),
        ("/home/u/.venv/bin/hippoctl session-end", commands.SESSION_END, True),
        ("'/usr/bin/python3.11' -m hippoctl session-end", commands.SESSION_END, True),
        ('"C:\\Program Files\\hippo\\hippoctl.exe" session-end', commands.SESSION_END, True),
        ("hippo session-end --log-file '/h/.hippo/logs/claude-code-sleep.log'", commands.SESSION_END, True),
        ("hippo capture --last-session", commands.SESSION_END, True),
        ("hippo last-sleep --path /x", commands.LAST_SLEEP, True),
        ("hippo context --pinned-only --format additional-context", commands.PROMPT, True),
        ("hippoctl session-end --strict", commands.SESSION_END, False),
        ("hippoctl recall foo", commands.SESSION_END, False),
        ("echo hippo sleep", commands.SESSION_END, False),
        ("nice hippoctl session-end", commands.SESSION_END, False),
        ("hippo last-sleep --log-file /x", commands.LAST_SLEEP, False),
        ("hippoctl session-end 'unbalanced", commands.SESSION_END, False),
    ],
)
def test_which_commands_an_entry_owns(command: str, spec: commands.HookSpec, owned: bool) -> None:
    assert spec.owns(command) is owned


def test_a_null_hooks_key_gets_the_seven_entries(tmp_path: Path, env: dict[str, str]) -> None:
    path = write(env, {"model": "opus", "hooks": None})
    claude.install(PREFIX, global_root=str(tmp_path), env=env)
    assert json.loads(path.read_text()) == {"model": "opus", "hooks": ours()}


def test_unreadable_settings_left_alone(tmp_path: Path, env: dict[str, str]) -> None:
    path = settings_file(env)
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"model": "caf\xe9"}\n')
    with pytest.raises(hookjson.SettingsError, match=f"{re.escape(str(path))} is not UTF-8 text"):
        claude.install(PREFIX, global_root=str(tmp_path), env=env)
    assert path.read_bytes() == b'{"model": "caf\xe9"}\n' and claude.status(PREFIX, env).state == "edited"
    path.unlink()
    path.mkdir()  # a folder where the file should be
    with pytest.raises(hookjson.SettingsError):
        claude.install(PREFIX, global_root=str(tmp_path), env=env)
    with pytest.raises(hookjson.SettingsError):
        claude.uninstall(global_root=str(tmp_path), env=env)
    assert path.is_dir()


def test_a_linked_settings_file_stays_a_link(tmp_path: Path, env: dict[str, str]) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    path = settings_file(env)
    path.parent.mkdir(parents=True)
    path.symlink_to(dotfiles)
    claude.install(PREFIX, global_root=str(tmp_path), env=env)
    assert path.is_symlink() and len(claude.status(PREFIX, env).present) == 7
    claude.uninstall(global_root=str(tmp_path), env=env)
    assert path.is_symlink() and json.loads(dotfiles.read_text()) == USER_SETTINGS


def test_a_file_with_nothing_to_change_keeps_its_layout(tmp_path: Path, env: dict[str, str]) -> None:
    path = settings_file(env)
    path.parent.mkdir(parents=True)
    layout = json.dumps({"model": "opus", "hooks": ours()}, indent=4).replace("\n", "\r\n").encode()
    path.write_bytes(layout)  # everything there, as a Windows editor saved it
    assert claude.install(PREFIX, global_root=str(tmp_path), env=env).lines == []
    assert path.read_bytes() == layout and files.existing_backup(str(path), str(tmp_path)) is None
    theirs = json.dumps(USER_SETTINGS, indent=4).encode()
    path.write_bytes(theirs)  # none of hippod's entries: uninstall has nothing to remove
    assert claude.uninstall(global_root=str(tmp_path), env=env).lines == []
    assert path.read_bytes() == theirs and files.existing_backup(str(path), str(tmp_path)) is None
