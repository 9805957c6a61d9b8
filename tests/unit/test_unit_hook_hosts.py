"""Codex's append-only hooks.json, the OpenCode plugin and opencode.json clean-up, detection and the
doctor's agent checks (integrations.md §1, §5, §6, §12), against real files in a temp home."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hippod.integrations import blocks, claude, codex, hookjson, opencode, targets

PROMPT = "context --pinned-only --include-recent 5 --format additional-context"
PY_PREFIX = "'/opt/py 3/bin/python' -m hippoctl"
ABS_PREFIX = "/home/u/.venv/bin/hippoctl"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


def codex_file(env: dict[str, str], data: Any | None = None) -> Path:
    path = Path(codex.hooks_path(env))
    path.parent.mkdir(parents=True, exist_ok=True)
    if data is not None:
        path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def test_codex_needs_its_home(tmp_path: Path, env: dict[str, str]) -> None:
    report = codex.install("hippoctl", global_root=str(tmp_path), env=env)
    assert report.lines == [] and "not found" in report.warnings[0]
    assert not Path(env["HOME"], ".codex").exists()


def test_codex_two_entries_with_windows_commands(tmp_path: Path, env: dict[str, str]) -> None:
    path = codex_file(env)
    report = codex.install("hippoctl", global_root=str(tmp_path), env=env)
    assert json.loads(path.read_text()) == {
        "hooks": {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": f"hippoctl {PROMPT}",
                            "commandWindows": f"hippoctl.exe {PROMPT}",
                            "timeout": 5,
                        }
                    ]
                }
            ],
            "SessionStart": [
                {
                    "matcher": "compact",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "hippoctl compact-resume",
                            "commandWindows": "hippoctl.exe compact-resume",
                            "timeout": 10,
                        }
                    ],
                }
            ],
        }
    }
    assert codex.TRUST_REMINDER in report.warnings


def test_codex_other_prefix_keeps_it_for_windows(tmp_path: Path, env: dict[str, str]) -> None:
    path = codex_file(env)
    codex.install(PY_PREFIX, global_root=str(tmp_path), env=env)
    hook = json.loads(path.read_text())["hooks"]["SessionStart"][0]["hooks"][0]
    assert hook["command"] == hook["commandWindows"] == f"{PY_PREFIX} compact-resume"


def test_codex_replaces_an_older_form_of_ours_in_place_and_never_edits_anyone_elses(
    tmp_path: Path, env: dict[str, str]
) -> None:
    user = {
        "hooks": {
            "SessionStart": [{"hooks": [{"type": "command", "command": "echo start", "timeout": 1}]}],
            # What earlier versions wrote: a bare hippoctl, which Codex's PATH may not find.
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": f"hippoctl {PROMPT}", "timeout": 5}]},
                {"hooks": [{"type": "command", "command": "echo mine"}]},
            ],
        },
        "other": True,
    }
    path = codex_file(env, user)
    report = codex.install(ABS_PREFIX, global_root=str(tmp_path), env=env)
    data = json.loads(path.read_text())
    assert data["hooks"]["UserPromptSubmit"] == [
        {
            "hooks": [
                {
                    "type": "command",
                    "command": f"{ABS_PREFIX} {PROMPT}",
                    "timeout": 5,
                    "commandWindows": f"{ABS_PREFIX} {PROMPT}",
                }
            ]
        },
        user["hooks"]["UserPromptSubmit"][1],
    ]
    assert data["hooks"]["SessionStart"][0] == user["hooks"]["SessionStart"][0]
    assert data["hooks"]["SessionStart"][1]["hooks"][0]["command"] == f"{ABS_PREFIX} compact-resume"
    assert (
        f"Replaced hippoctl {PROMPT} with {ABS_PREFIX} {PROMPT} (UserPromptSubmit) in Codex hooks.json"
        in (report.lines)
    )
    assert codex.TRUST_REMINDER in report.warnings
    assert codex.status(ABS_PREFIX, env).state == "installed"
    after = path.read_bytes()
    codex.install(ABS_PREFIX, global_root=str(tmp_path), env=env)
    assert path.read_bytes() == after
    codex.uninstall(global_root=str(tmp_path), env=env)
    assert json.loads(path.read_text()) == {
        "hooks": {
            "SessionStart": user["hooks"]["SessionStart"],
            "UserPromptSubmit": [user["hooks"]["UserPromptSubmit"][1]],
        },
        "other": True,
    }


def test_codex_broken_file_untouched(tmp_path: Path, env: dict[str, str]) -> None:
    path = codex_file(env)
    path.write_text("{oops")
    with pytest.raises(hookjson.SettingsError, match=f"{path} is not valid JSON .* line 1 column 2"):
        codex.install("hippoctl", global_root=str(tmp_path), env=env)
    assert path.read_text() == "{oops"
    report = targets.install_user("codex", "hippoctl", global_root=str(tmp_path), env=env)
    assert path.read_text() == "{oops" and report.warnings[0].endswith("; codex hooks left unchanged")


# --- OpenCode -------------------------------------------------------------------------------------------


def test_plugin_written_once_with_its_marker_and_argv(tmp_path: Path, env: dict[str, str]) -> None:
    report = opencode.install(PY_PREFIX, None, global_root=str(tmp_path), env=env)
    path = Path(opencode.plugin_path(env))
    assert path == tmp_path / "config" / "opencode" / "plugins" / "hippo.ts"
    text = path.read_text()
    assert text.split("\n")[0] == "// HIPPO_OPENCODE_PLUGIN_V1 (hippod)"
    assert 'const SESSION_END = ["/opt/py 3/bin/python", "-m", "hippoctl", "session-end", "--once"];' in text
    assert 'const LAST_SLEEP = ["/opt/py 3/bin/python", "-m", "hippoctl", "last-sleep"];' in text
    # What it does on each event is run for real in tests/e2e/test_opencode_plugin.py.
    for hook in ('"experimental.chat.system.transform"', '"chat.message"', "dispose:", "event:"):
        assert hook in text
    assert ".quiet()" not in text and "$`" not in text  # its output is read, and no shell runs it
    assert report.lines == [f"Installed OpenCode plugin {path}"]
    assert opencode.install(PY_PREFIX, None, global_root=str(tmp_path), env=env).lines == []
    assert opencode.plugin_state("hippoctl", env) == "outdated"
    assert opencode.install("hippoctl", None, global_root=str(tmp_path), env=env).lines == [
        f"Updated OpenCode plugin {path}"
    ]


def test_users_own_plugin_is_never_touched(tmp_path: Path, env: dict[str, str]) -> None:
    path = Path(opencode.plugin_path(env))
    path.parent.mkdir(parents=True)
    path.write_text("export const Mine = async () => ({});\n")
    assert opencode.install("hippoctl", None, global_root=str(tmp_path), env=env).warnings
    assert opencode.uninstall(None, global_root=str(tmp_path), env=env).warnings
    assert path.read_text() == "export const Mine = async () => ({});\n"


def test_original_plugin_is_replaced_and_uninstall_deletes_by_marker(
    tmp_path: Path, env: dict[str, str]
) -> None:
    path = Path(opencode.plugin_path(env))
    path.parent.mkdir(parents=True)
    path.write_text("// HIPPO_OPENCODE_PLUGIN_V1\nexport const HippoPlugin = 1;\n")
    assert opencode.plugin_state("hippoctl", env) == "outdated"
    opencode.install("hippoctl", None, global_root=str(tmp_path), env=env)
    assert path.read_text() == opencode.plugin_source("hippoctl")
    opencode.uninstall(None, global_root=str(tmp_path), env=env)
    assert not path.exists()


def test_stray_hooks_key_removed_from_both_opencode_json(tmp_path: Path, env: dict[str, str]) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    stray = {"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "hippo session-end"}]}]}}
    (project / "opencode.json").write_text(json.dumps({"theme": "dark", **stray, "model": "x"}))
    user_config = Path(env["XDG_CONFIG_HOME"], "opencode", "opencode.json")
    user_config.parent.mkdir(parents=True)
    user_config.write_text(json.dumps({"$schema": "s", **stray}))
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"hooks": {"x": [{"command": "make lint"}]}}))
    assert opencode.stray_hooks(str(own)) is False
    opencode.install("hippoctl", str(project), global_root=str(tmp_path), env=env)
    assert json.loads((project / "opencode.json").read_text()) == {"theme": "dark", "model": "x"}
    assert json.loads(user_config.read_text()) == {"$schema": "s"}
    assert "hooks" not in opencode.plugin_source("hippoctl")


def test_unparseable_opencode_json_with_hooks_is_left(tmp_path: Path, env: dict[str, str]) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "opencode.json").write_text('{"hooks": // a comment\n {}}')
    report = opencode.install("hippoctl", str(project), global_root=str(tmp_path), env=env)
    assert any("opencode.json is not valid JSON" in w for w in report.warnings)
    assert (project / "opencode.json").read_text() == '{"hooks": // a comment\n {}}'


# --- detection and doctor ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("made", "found"),
    [
        (["CLAUDE.md"], ["claude-code"]),
        ([".claude/settings.json"], ["claude-code"]),
        (["AGENTS.md"], ["codex", "cursor", "openclaw"]),
        ([".codex/"], ["codex"]),
        ([".openclaw/"], ["openclaw"]),
        ([".opencode/"], ["opencode"]),
        (["opencode.json"], ["opencode"]),
        ([".pi/agent/"], ["pi"]),
        ([".cursorrules", "README.md"], []),
    ],
)
def test_detect(tmp_path: Path, env: dict[str, str], made: list[str], found: list[str]) -> None:
    for name in made:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith("/"):
            path.mkdir(exist_ok=True)
        else:
            path.write_text("x")
    assert targets.detect(str(tmp_path), env) == found


def test_agents_md_counts_for_opencode_once_it_is_installed(tmp_path: Path, env: dict[str, str]) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "AGENTS.md").write_text("x")
    assert "opencode" not in targets.detect(str(project), env)
    Path(env["XDG_CONFIG_HOME"], "opencode").mkdir(parents=True)
    assert targets.detect(str(project), env) == ["codex", "cursor", "openclaw", "opencode"]


def checks_by_name(project: Path, env: dict[str, str], root: Path) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for check in targets.doctor_checks(str(project), "hippoctl", global_root=str(root), env=env):
        out.setdefault(check.name, []).append(check)
    return out


def test_doctor_quiet_when_no_agent_is_in_use(tmp_path: Path, env: dict[str, str]) -> None:
    found = checks_by_name(tmp_path, env, tmp_path)
    assert {c.status for cs in found.values() for c in cs} == {"ok"}
    assert set(found) == {"Claude Code", "Codex", "OpenCode", "Blocks"}


def test_doctor_names_each_problem_and_its_fix(tmp_path: Path, env: dict[str, str]) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "CLAUDE.md").write_text(f"{blocks.START}\nmine\n{blocks.END}\n")
    (project / "AGENTS.md").write_text("agents\n")
    settings = Path(claude.settings_path(env))
    settings.parent.mkdir(parents=True)
    settings.write_text("{broken")
    Path(codex.hooks_path(env)).parent.mkdir(parents=True)
    Path(opencode.plugin_path(env)).parent.mkdir(parents=True)
    found = checks_by_name(project, env, tmp_path)
    [claude_check] = found["Claude Code"]
    assert claude_check.status == "fail" and str(settings) in claude_check.message
    codex_check, trust = found["Codex"][0], found["Codex trust"][0]
    assert (codex_check.status, codex_check.fix) == ("warn", "hippoctl hook install codex")
    assert trust.status == "warn" and "/hooks" in trust.message
    assert found["OpenCode"][0].fix == "hippoctl hook install opencode"
    edited, missing = found["Blocks"]
    assert edited.status == "warn" and "edited hippo block" in edited.message
    assert missing.message == f"no hippo block in {project / 'AGENTS.md'}"
    assert missing.fix == "hippoctl hook install codex"
    settings.write_text("{}")
    claude_check = checks_by_name(project, env, tmp_path)["Claude Code"][0]
    assert claude_check.status == "warn" and claude_check.fix == "hippoctl hook install claude-code"
    assert "SessionEnd session-end" in claude_check.message
