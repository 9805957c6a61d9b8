"""How installed hooks call hippoctl (an absolute path, hippoctl/selfcommand.py), which installed
commands are hippod's (hippod/integrations/hook_commands.py), and doctor running each one as its host
would (hippoctl/doctor_hooks.py): real files in a temp home, real processes through /bin/sh."""

from __future__ import annotations

import copy
import json
import os
import shlex
import stat
import sys
from pathlib import Path

import pytest

from hippoctl import doctor_hooks, selfcommand
from hippoctl.protocol.replies_doctor import FAIL, OK, HookCommand
from hippod.integrations import claude, codex, commands, hook_commands, opencode

PROMPT = commands.PROMPT_SUFFIX
ABS = "/home/u/.venv/bin/hippoctl"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


def script(folder: Path, name: str = "hippoctl", body: str = "exit 0") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# --- the prefix ----------------------------------------------------------------------------------


def test_the_prefix_is_the_absolute_path_even_when_path_finds_this_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "venv dir" / "bin"
    hippoctl = script(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    monkeypatch.setattr(sys, "argv", [str(hippoctl), "init"])
    assert selfcommand.hook_command() == shlex.quote(str(hippoctl))
    assert shlex.split(selfcommand.hook_command()) == [str(hippoctl)]


def test_a_relative_script_path_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script(tmp_path / "bin")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [os.path.join("bin", "hippoctl"), "init"])
    assert selfcommand.hook_argv() == [str(tmp_path / "bin" / "hippoctl")]


def test_run_as_a_module_the_prefix_names_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["/src/hippoctl/__main__.py", "init"])
    assert selfcommand.hook_argv() == [sys.executable, "-m", "hippoctl"]


def test_the_mcp_entry_uses_the_same_words() -> None:
    assert commands.mcp_argv(shlex.quote("/opt/my venv/bin/hippoctl")) == ["/opt/my venv/bin/hippoctl", "mcp"]
    assert commands.mcp_argv("'/usr/bin/python3' -m hippoctl") == [
        "/usr/bin/python3",
        "-m",
        "hippoctl",
        "mcp",
    ]


def test_the_bare_form_earlier_versions_wrote_is_replaced_in_place(
    tmp_path: Path, env: dict[str, str]
) -> None:
    claude.install("hippoctl", global_root=str(tmp_path), env=env)
    path = Path(claude.settings_path(env))
    bare = json.loads(path.read_text())
    bare["hooks"]["UserPromptSubmit"].append({"hooks": [{"type": "command", "command": "hippoctl recall x"}]})
    bare["model"] = "opus"
    path.write_text(json.dumps(bare, indent=2) + "\n")
    report = claude.install(ABS, global_root=str(tmp_path), env=env)
    assert sum(line.startswith("Replaced hippoctl ") for line in report.lines) == 7
    # The same entries in the same places, each of ours now starting with the absolute path.
    expected = copy.deepcopy(bare)
    for entries in expected["hooks"].values():
        for hook in (h for entry in entries for h in entry["hooks"]):
            if hook["command"] != "hippoctl recall x":
                hook["command"] = hook["command"].replace("hippoctl", ABS, 1)
    assert json.loads(path.read_text()) == expected
    assert claude.status(ABS, env).state == "installed"


# --- which installed commands are hippod's --------------------------------------------------------


def test_only_hippods_own_commands_are_listed_with_their_entry(tmp_path: Path, env: dict[str, str]) -> None:
    claude.install(ABS, global_root=str(tmp_path), env=env)
    path = Path(claude.settings_path(env))
    data = json.loads(path.read_text())
    data["hooks"]["SessionEnd"].append({"hooks": [{"type": "command", "command": "hippoctl session-end"}]})
    data["hooks"]["SessionEnd"].append({"hooks": [{"type": "command", "command": "hippo sleep"}]})
    data["hooks"]["UserPromptSubmit"].append(
        {"hooks": [{"type": "command", "command": "hippoctl recall foo"}]}
    )
    data["hooks"]["Notification"] = [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
    path.write_text(json.dumps(data))
    Path(codex.hooks_path(env)).parent.mkdir(parents=True)
    codex.install(ABS, global_root=str(tmp_path), env=env)
    opencode.install(ABS, None, global_root=str(tmp_path), env=env)
    found = [(c.entry, c.command, c.fix) for c in hook_commands.installed(env)]
    fix = "hippoctl hook install "
    assert found == [
        ("Claude Code SessionEnd", f"{ABS} session-end", fix + "claude-code"),
        ("Claude Code SessionEnd", "hippoctl session-end", fix + "claude-code"),
        ("Claude Code SessionStart", f"{ABS} last-sleep", fix + "claude-code"),
        ("Claude Code SessionStart (compact)", f"{ABS} compact-resume", fix + "claude-code"),
        ("Claude Code UserPromptSubmit", f"{ABS} {PROMPT}", fix + "claude-code"),
        ("Claude Code PreCompact", f"{ABS} pre-compact", fix + "claude-code"),
        ("Claude Code PostCompact", f"{ABS} post-compact", fix + "claude-code"),
        ("Claude Code PostToolUseFailure", f"{ABS} capture-error", fix + "claude-code"),
        ("Codex UserPromptSubmit", f"{ABS} {PROMPT}", fix + "codex"),
        ("Codex SessionStart (compact)", f"{ABS} compact-resume", fix + "codex"),
        ("OpenCode plugin session-end", f"{ABS} session-end --once", fix + "opencode"),
        ("OpenCode plugin last-sleep", f"{ABS} last-sleep", fix + "opencode"),
    ]


def test_the_plugins_argument_lists_are_found_under_any_prefix() -> None:
    text = opencode.plugin_source("'/opt/py 3/bin/python' -m hippoctl")
    assert hook_commands.plugin_argvs(text) == [
        ["/opt/py 3/bin/python", "-m", "hippoctl", "session-end", "--once"],
        ["/opt/py 3/bin/python", "-m", "hippoctl", "last-sleep"],
    ]
    assert hook_commands.plugin_argvs('const X: string[] = ["echo", "hippoctl"];') == []


def test_a_users_own_plugin_and_a_broken_settings_file_list_nothing(
    tmp_path: Path, env: dict[str, str]
) -> None:
    plugin = Path(opencode.plugin_path(env))
    plugin.parent.mkdir(parents=True)
    plugin.write_text('const A: string[] = ["/x/hippoctl", "session-end"];\n')
    settings = Path(claude.settings_path(env))
    settings.parent.mkdir(parents=True)
    settings.write_text("{broken")
    assert hook_commands.installed(env) == []


# --- running them as the host does ---------------------------------------------------------------


def test_a_bare_hippoctl_cannot_start_from_the_bare_path(tmp_path: Path) -> None:
    outcome = doctor_hooks.run_one("hippoctl-not-on-this-path session-end", env={}, cwd=str(tmp_path))
    assert (outcome.code, outcome.problem) == (127, "cannot start")
    assert "not found" in outcome.detail


def test_a_file_that_is_not_executable_cannot_start(tmp_path: Path) -> None:
    plain = tmp_path / "hippoctl"
    plain.write_text("#!/bin/sh\n")
    outcome = doctor_hooks.run_one(f"{plain} last-sleep", env={}, cwd=str(tmp_path))
    assert (outcome.code, outcome.problem) == (126, "cannot start")


def test_a_broken_interpreter_and_a_failing_start_are_problems(tmp_path: Path) -> None:
    gone = tmp_path / "gone.py"
    gone.write_text("#!/nonexistent/venv/bin/python\n")
    gone.chmod(0o700)
    assert doctor_hooks.run_one(str(gone), env={}, cwd=str(tmp_path)).problem == "cannot start"
    failing = script(tmp_path / "bin", body="echo 'ModuleNotFoundError: No module named msgspec' >&2; exit 1")
    outcome = doctor_hooks.run_one(f"{failing} capture-error", env={}, cwd=str(tmp_path))
    assert (outcome.problem, outcome.detail) == (
        "fails",
        "exit 1: ModuleNotFoundError: No module named msgspec",
    )
    quiet = script(tmp_path / "bin2", body="missing-helper; exit 0")
    assert doctor_hooks.run_one(str(quiet), env={}, cwd=str(tmp_path)).problem == "cannot start all of it"


def test_a_command_runs_with_the_bare_path_an_empty_stdin_and_the_daemon_sealed_off(tmp_path: Path) -> None:
    probe = script(tmp_path / "bin", body=f"cat > {tmp_path}/stdin; env > {tmp_path}/env")
    user_env = {
        "HOME": str(tmp_path),
        "HIPPO_HOME": "/real/store",
        "HIPPO_SOCKET": "/real/d.sock",
        "KEEP": "1",
    }
    outcomes = doctor_hooks.run_all([f"{probe} session-end"], env=user_env, cwd=str(tmp_path))
    assert outcomes[f"{probe} session-end"].problem is None
    assert (tmp_path / "stdin").read_text() == ""
    got = dict(line.split("=", 1) for line in (tmp_path / "env").read_text().splitlines() if "=" in line)
    assert got["PATH"] == "/usr/bin:/bin" and got["HIPPO_NO_SPAWN"] == "1"
    assert got["KEEP"] == "1" and got["HOME"] == str(tmp_path)
    assert got["HIPPO_HOME"] != "/real/store" and got["HIPPO_SOCKET"].startswith(got["HIPPO_HOME"])
    assert not os.path.exists(got["HIPPO_HOME"])  # the scratch folder is gone afterwards


def test_each_failing_entry_is_one_check_naming_the_entry_the_command_and_why(tmp_path: Path) -> None:
    good = script(tmp_path / "bin")
    found = [
        HookCommand(
            "Claude Code SessionEnd", "hippoctl-absent session-end", "hippoctl hook install claude-code"
        ),
        HookCommand("Claude Code SessionStart", f"{good} last-sleep", "hippoctl hook install claude-code"),
        HookCommand("Codex UserPromptSubmit", f"hippoctl-absent {PROMPT}", "hippoctl hook install codex"),
    ]
    checks = doctor_hooks.checks(found, cwd=str(tmp_path), env={})
    assert [(c.name, c.status, c.fix) for c in checks] == [
        ("Hook commands", FAIL, "hippoctl hook install claude-code"),
        ("Hook commands", FAIL, "hippoctl hook install codex"),
    ]
    first = checks[0].message
    assert first.startswith(
        "Claude Code SessionEnd: hippoctl-absent session-end cannot start with PATH=/usr/bin:/bin"
    )
    assert "exit 127" in first and "not found" in first and "\n" not in first
    [ok] = doctor_hooks.checks(found[1:2], cwd=str(tmp_path), env={})
    assert ok.status == OK and ok.message.startswith("the 1 command starts with PATH=/usr/bin:/bin")
    assert doctor_hooks.checks([], cwd=str(tmp_path), env={})[0].status == OK
