"""`hook list|install|uninstall <target>` through hippoctl and a real daemon, for every target, against
real config files that already hold the user's own hooks and text (integrations.md §3-§8)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippod.integrations import blocks, files

if TYPE_CHECKING:
    from e2e.harness import Hippo

# The harness runs the client as `python -m hippoctl`, so that is how installed hooks call it.
PREFIX = shlex.join([sys.executable, "-m", "hippoctl"])
PROMPT = "context --pinned-only --include-recent 5 --format additional-context"
CLAUDE_TABLE = [
    ("SessionEnd", None, "session-end", 5),
    ("SessionStart", None, "last-sleep", 5),
    ("SessionStart", "compact", "compact-resume", 10),
    ("UserPromptSubmit", None, PROMPT, 5),
    ("PreCompact", None, "pre-compact", 30),
    ("PostCompact", None, "post-compact", 30),
    ("PostToolUseFailure", None, "capture-error", 5),
]
USER_MD = "# Notes for agents\n\nRun `make test` before committing.\n"
USER_SETTINGS: dict[str, Any] = {
    "model": "sonnet",
    "hooks": {
        "SessionEnd": [{"hooks": [{"type": "command", "command": "echo done", "timeout": 2}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "hippoctl recall foo"}]}],
    },
    "env": {"A": "1"},
}


def project(hippo: Hippo, **files: str) -> Path:
    folder = Path(hippo.root, "proj")
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def hook(hippo: Hippo, cwd: Path, *args: str) -> tuple[str, str]:
    done = hippo.ctl("hook", *args, cwd=str(cwd))
    assert done.returncode == 0, done
    return done.stdout, done.stderr


def listed(hippo: Hippo, cwd: Path) -> dict[str, Any]:
    return {row["target"]: row for row in hippo.json("hook", "list", cwd=str(cwd))["targets"]}


def backup_of(hippo: Hippo, path: Path) -> Path | None:
    """The backup the global store's backups/index.json names for `path`, if any."""
    folder = Path(hippo.home, files.BACKUPS_DIR)
    try:
        index = json.loads((folder / files.INDEX_NAME).read_text())
    except FileNotFoundError:
        return None
    names = [name for name, original in index.items() if original == str(path)]
    return folder / names[0] if names else None


def outside_markers(text: str) -> str:
    span = blocks.find(text)
    assert span is not None and span.end > 0
    return text[: span.start] + text[span.end :]


def test_claude_code_install_twice_then_uninstall(hippo: Hippo) -> None:
    hippo.start()
    folder = project(hippo, **{"CLAUDE.md": USER_MD})
    settings = Path(hippo.user_home, ".claude", "settings.json")
    settings.parent.mkdir(parents=True)
    # As a person saves it: 4 spaces, one object on one line, no newline at the end.
    layout = json.dumps(USER_SETTINGS, indent=4)
    original = layout.replace('{\n        "A": "1"\n    }', '{"A": "1"}').encode()
    assert b'"env": {"A": "1"}\n}' in original
    settings.write_bytes(original)
    out, _ = hook(hippo, folder, "install", "claude-code")
    assert f"Installed claude-code block in {folder / 'CLAUDE.md'}" in out
    assert f"Installed {PREFIX} session-end SessionEnd hook in claude-code settings" in out

    data = json.loads(settings.read_text())
    assert list(data) == ["model", "hooks", "env"] and data["env"] == {"A": "1"}
    for event, matcher, suffix, timeout in CLAUDE_TABLE:
        entry: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        entry["hooks"] = [{"type": "command", "command": f"{PREFIX} {suffix}", "timeout": timeout}]
        assert data["hooks"][event].count(entry) == 1, (event, suffix)
    assert data["hooks"]["UserPromptSubmit"][0] == USER_SETTINGS["hooks"]["UserPromptSubmit"][0]
    claude_md = Path(folder, "CLAUDE.md").read_text()
    assert outside_markers(claude_md) == USER_MD + "\n\n"
    assert blocks.find(claude_md).body.strip() == blocks.current_body(blocks.CLAUDE, PREFIX)  # type: ignore[union-attr]

    snapshot = settings.read_bytes(), Path(folder, "CLAUDE.md").read_bytes()
    out, err = hook(hippo, folder, "install", "claude-code")
    assert (out, err) == ("claude-code: nothing changed\n", "")
    assert (settings.read_bytes(), Path(folder, "CLAUDE.md").read_bytes()) == snapshot
    assert listed(hippo, folder)["claude-code"]["state"] == "installed"

    # One backup each, of the user's own file, made before the first change and never replaced, in
    # the global store (this folder has no store of its own), never beside the file.
    backups = [backup_of(hippo, p) for p in (settings, folder / "CLAUDE.md")]
    assert [b.read_bytes() for b in backups if b is not None] == [original, USER_MD.encode()]
    assert not [p for p in [*folder.iterdir(), *settings.parent.iterdir()] if p.name.endswith(".hippo-bak")]

    hook(hippo, folder, "uninstall", "claude-code")
    assert settings.read_bytes() == original  # byte for byte, not only the same JSON
    assert Path(folder, "CLAUDE.md").read_text() == USER_MD
    assert not any(b.exists() for b in backups if b is not None)  # what they kept is back in place
    assert backup_of(hippo, settings) is None and backup_of(hippo, folder / "CLAUDE.md") is None
    installed = json.loads(Path(hippo.home, "integrations", "installed.json").read_text())
    assert installed == []


def test_claude_code_legacy_hooks_migrated_in_place(hippo: Hippo) -> None:
    hippo.start()
    folder = project(hippo)
    legacy = {
        "hooks": {
            "SessionEnd": [
                {"hooks": [{"type": "command", "command": "hippo session-end --log-file /l.log"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "hippo sleep"}]}],
            "SessionStart": [
                {"hooks": [{"type": "command", "command": "hippoctl last-sleep", "timeout": 5}]}
            ],
        }
    }
    settings = write_json(Path(hippo.user_home, ".claude", "settings.json"), legacy)
    out, _ = hook(hippo, folder, "install", "claude-code")
    assert f"Replaced hippo session-end --log-file /l.log with {PREFIX} session-end" in out
    hooks = json.loads(settings.read_text())["hooks"]
    assert "Stop" not in hooks
    assert hooks["SessionEnd"] == [
        {"hooks": [{"type": "command", "command": f"{PREFIX} session-end", "timeout": 5}]}
    ]
    assert hooks["SessionStart"][0]["hooks"][0]["command"] == f"{PREFIX} last-sleep"
    hook(hippo, folder, "uninstall", "claude-code")
    assert not settings.exists()  # it held nothing but hippo's own entries


def test_broken_settings_fail_the_request_and_change_nothing(hippo: Hippo) -> None:
    hippo.start()
    folder = project(hippo, **{"CLAUDE.md": USER_MD})
    settings = Path(hippo.user_home, ".claude", "settings.json")
    settings.parent.mkdir(parents=True)
    broken = '{"hooks": {"SessionEnd": [\n'
    settings.write_text(broken)
    for action in ("install", "uninstall"):
        done = hippo.ctl("hook", action, "claude-code", cwd=str(folder))
        reason = "Expecting value at line 2 column 1"
        assert (done.returncode, done.stdout) == (1, ""), done
        assert done.stderr == f"hippoctl: {settings} is not valid JSON ({reason}); nothing changed\n"
        assert settings.read_text() == broken and Path(folder, "CLAUDE.md").read_text() == USER_MD
    assert not any(p.name.endswith(".hippo-bak") for p in [*folder.iterdir(), *settings.parent.iterdir()])
    assert not Path(hippo.home, "backups").exists()
    row = listed(hippo, folder)["claude-code"]
    assert row["state"] == "edited" and [f["state"] for f in row["files"]] == ["absent", "edited"]


def test_broken_codex_hooks_json_fails_the_request(hippo: Hippo) -> None:
    hippo.start()
    folder = project(hippo, **{"AGENTS.md": USER_MD})
    hooks_json = Path(hippo.user_home, ".codex", "hooks.json")
    hooks_json.parent.mkdir(parents=True)
    hooks_json.write_text("{'hooks': {}}")
    done = hippo.ctl("hook", "install", "codex", cwd=str(folder))
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done
    assert f"{hooks_json} is not valid JSON (Expecting property name" in done.stderr
    assert "line 1 column 2); nothing changed" in done.stderr
    assert hooks_json.read_text() == "{'hooks': {}}" and Path(folder, "AGENTS.md").read_text() == USER_MD


def test_an_edited_block_is_left_alone(hippo: Hippo) -> None:
    hippo.start()
    edited = f"{USER_MD}\n{blocks.START}\n## Project Memory (Hippo)\nMy own rules.\n{blocks.END}\n"
    folder = project(hippo, **{"CLAUDE.md": edited})
    _, err = hook(hippo, folder, "install", "claude-code")
    assert f"edited hippo block in {folder / 'CLAUDE.md'} left alone" in err
    assert Path(folder, "CLAUDE.md").read_text() == edited
    hook(hippo, folder, "uninstall", "claude-code")
    assert Path(folder, "CLAUDE.md").read_text() == edited


def test_codex_appends_two_entries_and_the_agents_block(hippo: Hippo) -> None:
    hippo.start()
    folder = project(hippo, **{"AGENTS.md": USER_MD})
    user_hooks = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}
    hooks_json = write_json(Path(hippo.user_home, ".codex", "hooks.json"), user_hooks)
    out, err = hook(hippo, folder, "install", "codex")
    assert "trust them once" in err
    data = json.loads(hooks_json.read_text())
    assert data["hooks"]["SessionStart"][0] == user_hooks["hooks"]["SessionStart"][0]
    assert data["hooks"]["SessionStart"][1] == {
        "matcher": "compact",
        "hooks": [
            {
                "type": "command",
                "command": f"{PREFIX} compact-resume",
                "commandWindows": f"{PREFIX} compact-resume",
                "timeout": 10,
            }
        ],
    }
    assert data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"] == f"{PREFIX} {PROMPT}"
    assert blocks.state(Path(folder, "AGENTS.md").read_text(), blocks.AGENTS, PREFIX) == "installed"
    snapshot = hooks_json.read_bytes(), Path(folder, "AGENTS.md").read_bytes()
    out, err = hook(hippo, folder, "install", "codex")
    assert out == "codex: nothing changed\n" and "trust them once" in err
    assert (hooks_json.read_bytes(), Path(folder, "AGENTS.md").read_bytes()) == snapshot
    hook(hippo, folder, "uninstall", "codex")
    assert json.loads(hooks_json.read_text()) == user_hooks
    assert Path(folder, "AGENTS.md").read_text() == USER_MD


def test_codex_without_its_home_gets_only_the_block(hippo: Hippo) -> None:
    hippo.start()
    folder = project(hippo, **{"AGENTS.md": USER_MD})
    _, err = hook(hippo, folder, "install", "codex")
    assert "Codex home" in err and "not found" in err
    assert not Path(hippo.user_home, ".codex").exists()
    assert blocks.state(Path(folder, "AGENTS.md").read_text(), blocks.AGENTS, PREFIX) == "installed"
    codex = listed(hippo, folder)["codex"]
    assert codex["detected"] and codex["state"] == "installed"
    assert codex["files"][1]["detail"] == "Codex home not found"


def test_agents_md_readers_share_one_block(hippo: Hippo) -> None:
    hippo.start()
    legacy = blocks.render(blocks.AGENTS, PREFIX) + "\n"
    folder = project(
        hippo, **{"AGENTS.md": USER_MD, ".cursorrules": "Prefer tabs.\n\n" + legacy, ".pi/agent/x": ""}
    )
    for target in ("cursor", "openclaw", "pi"):
        hook(hippo, folder, "install", target)
    agents_md = Path(folder, "AGENTS.md")
    text = agents_md.read_text()
    assert text.count(blocks.START) == 1 and outside_markers(text) == USER_MD + "\n\n"
    assert Path(folder, ".cursorrules").read_text() == "Prefer tabs.\n\n" + legacy  # never written now
    rows = listed(hippo, folder)
    assert [rows[t]["state"] for t in ("cursor", "openclaw", "pi")] == ["outdated", "installed", "installed"]
    assert [rows[t]["detected"] for t in ("cursor", "openclaw", "pi")] == [True, True, True]
    assert not rows["opencode"]["detected"]

    out, _ = hook(hippo, folder, "uninstall", "cursor")
    assert f"Kept the hippo block in {agents_md} for openclaw, pi" in out
    assert Path(folder, ".cursorrules").read_text() == "Prefer tabs.\n"
    hook(hippo, folder, "uninstall", "openclaw")
    assert agents_md.read_text() == text
    out, _ = hook(hippo, folder, "uninstall", "pi")
    assert out == f"Removed hippo block from {agents_md}\n"
    assert agents_md.read_text() == USER_MD


def test_opencode_plugin_and_stray_hooks(hippo: Hippo) -> None:
    hippo.start()
    stray = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "hippo last-sleep"}]}]}}
    folder = project(hippo, **{"opencode.json": json.dumps({"model": "m", **stray}), "AGENTS.md": USER_MD})
    config_home = Path(hippo.env["XDG_CONFIG_HOME"], "opencode")
    user_config = write_json(config_home / "opencode.json", {"theme": "t", **stray})
    plugin = config_home / "plugins" / "hippo.ts"
    assert listed(hippo, folder)["opencode"]["state"] == "outdated"  # the stray keys count
    out, _ = hook(hippo, folder, "install", "opencode")
    assert f"Installed OpenCode plugin {plugin}" in out
    text = plugin.read_text()
    assert text.startswith("// HIPPO_OPENCODE_PLUGIN_V1 (hippod)\n")
    assert json.dumps([sys.executable, "-m", "hippoctl", "session-end", "--once"]) in text
    assert json.loads(Path(folder, "opencode.json").read_text()) == {"model": "m"}
    assert json.loads(user_config.read_text()) == {"theme": "t"}
    assert blocks.state(Path(folder, "AGENTS.md").read_text(), blocks.AGENTS, PREFIX) == "installed"
    snapshot = plugin.read_bytes()
    assert hook(hippo, folder, "install", "opencode")[0] == "opencode: nothing changed\n"
    assert plugin.read_bytes() == snapshot
    row = listed(hippo, folder)["opencode"]
    assert row["detected"] and row["state"] == "installed"
    hook(hippo, folder, "uninstall", "opencode")
    assert not plugin.exists() and os.listdir(plugin.parent) == []
    assert Path(folder, "AGENTS.md").read_text() == USER_MD

    plugin.write_text("export const Mine = 1;\n")
    _, err = hook(hippo, folder, "install", "opencode")
    assert "not hippod's; left alone" in err and plugin.read_text() == "export const Mine = 1;\n"


def test_hook_list_text_and_bad_usage(hippo: Hippo) -> None:
    hippo.start()
    folder = project(hippo, **{"CLAUDE.md": USER_MD})
    out, _ = hook(hippo, folder, "list")
    lines = out.splitlines()
    assert lines[0] == f"Agent targets for {folder}:"
    assert lines[1].split() == ["TARGET", "DETECTED", "STATE", "FILE", "PATH"]
    assert lines[2].split() == ["claude-code", "yes", "absent"]
    assert any(line.split()[:2] == ["absent", "block"] and "no hippo block" in line for line in lines)
    for args in (("install",), ("list", "codex"), ("install", "vim")):
        done = hippo.ctl("hook", *args, cwd=str(folder))
        assert done.returncode == 2 and done.stderr.count("\n") <= 3 and "Traceback" not in done.stderr


def test_hook_list_prints_a_header_row_over_its_columns(hippo: Hippo) -> None:
    hippo.start()
    folder = project(hippo, **{"CLAUDE.md": USER_MD})
    hook(hippo, folder, "install", "claude-code")
    out, _ = hook(hippo, folder, "list")
    lines = out.splitlines()
    assert lines[0] == f"Agent targets for {folder}:"
    assert lines[1].split() == ["TARGET", "DETECTED", "STATE", "FILE", "PATH"]
    state_at, file_at = lines[1].index("STATE"), lines[1].index("FILE")
    claude = lines.index(next(line for line in lines if line.startswith("claude-code ")))
    assert lines[claude][state_at:].split() == ["installed"]
    block = lines[claude + 1]
    assert block[:state_at].strip() == "" and block[state_at:].split()[0] == "installed"
    assert block[file_at:].startswith(f"block   {folder / 'CLAUDE.md'}")
