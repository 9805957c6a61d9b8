"""End-to-end: `init` and `setup` with a real daemon, real git repositories and real agent files
under the test's own HOME (integrations.md §1-§2)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.gitrepo import commit, make_repo

if TYPE_CHECKING:
    from e2e.harness import Hippo

START = "<!-- hippo:start -->"
END = "<!-- hippo:end -->"
USER_TEXT = "# My project\n\nUse tabs. Never push to main on Fridays.\n"


def _count(db: Path, where: str = "1") -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(f"SELECT count(*) FROM memories WHERE {where}").fetchone()[0])


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _settings(hippo: Hippo) -> Path:
    return Path(hippo.user_home) / ".claude" / "settings.json"


def _hook_commands(settings: Path) -> list[str]:
    data = json.loads(settings.read_text())
    return [
        hook["command"]
        for entries in data.get("hooks", {}).values()
        for entry in entries
        for hook in entry.get("hooks", [])
    ]


def _unit(hippo: Hippo) -> Path:
    return Path(hippo.env["XDG_CONFIG_HOME"]) / "systemd" / "user" / "hippod.service"


def _claude_project(tmp_path: Path, lessons: bool = True) -> Path:
    project = make_repo(tmp_path / "webapp")
    (project / "CLAUDE.md").write_text(USER_TEXT)
    if lessons:
        # Oldest first, as in a real history: `git log --since` stops at the first commit older
        # than the cutoff, so a newer parent behind an older child would never be read.
        commit(project, "fix: the retry loop forgot to back off", days_ago=40)  # outside 30 days
        commit(project, "fix: close the reader connection before the writer", days_ago=3)
    return project


def _wired_files(hippo: Hippo, project: Path) -> dict[str, str]:
    files = [
        project / "CLAUDE.md",
        _settings(hippo),
        _unit(hippo),
        Path(hippo.home) / "workspaces.json",
        Path(hippo.home) / "integrations" / "installed.json",
    ]
    return {str(f): _digest(f) for f in files}


def test_init_makes_seeds_wires_and_schedules_a_project(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    project = _claude_project(tmp_path)
    done = hippo.ok("init", cwd=str(project))
    store = project / ".hippo"
    lines = done.stdout.splitlines()
    assert lines[0] == f"Initialized Hippo at {store}"
    assert "   Directories: buffer/ episodic/ semantic/ conflicts/" in lines
    assert "   Files: hippo.db stats.json .gitignore" in lines
    assert "   Learned 1 lesson from 30 days of git history; imported 0 agent notes" in lines
    assert lines[-1] == "   Registered for the daily 06:15 run; installed per-user service hippod.service"
    for name in ("buffer", "episodic", "semantic", "conflicts"):
        assert (store / name).is_dir()
    assert (store / "stats.json").is_file()
    assert _count(store / "hippo.db", "source = 'git-learn'") == 1
    # The instruction block: appended after the user's text, which is left as it was.
    claude_md = (project / "CLAUDE.md").read_text()
    assert claude_md.startswith(USER_TEXT)
    assert START in claude_md and END in claude_md and "## Project Memory (Hippo)" in claude_md
    # Its backup is kept in the store, out of the repository.
    assert (store / "backups" / "CLAUDE.md").read_text() == USER_TEXT
    assert not list(project.glob("*.hippo-bak"))
    assert any(line.startswith("   Auto-installed") and "CLAUDE.md" in line for line in lines)
    # The seven Claude Code entries, each reported.
    commands = _hook_commands(_settings(hippo))
    assert len(commands) == 7
    assert sum("hook in claude-code settings" in line for line in lines) == 7
    # Registered for the daily run, the service installed through the service manager.
    registry = json.loads((Path(hippo.home) / "workspaces.json").read_text())
    assert str(project) in registry["workspaces"]
    assert "ExecStart=" in _unit(hippo).read_text()
    assert any("enable" in call and "hippod.service" in call for call in hippo.service_calls())
    installed = json.loads((Path(hippo.home) / "integrations" / "installed.json").read_text())
    kinds = {(r["target"], r["kind"]) for r in installed}
    assert {("claude-code", "block"), ("claude-code", "hook")} <= kinds
    assert any(r["kind"] == "service" for r in installed)
    data = hippo.json("init", cwd=str(project))
    assert data["targets"] == ["claude-code"] and data["registered"] and data["service"] == "hippod.service"


def test_running_init_again_changes_nothing(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    project = _claude_project(tmp_path)
    hippo.ok("init", cwd=str(project))
    before = _wired_files(hippo, project)
    memories = _count(project / ".hippo" / "hippo.db")
    calls = len(hippo.service_calls())
    again = hippo.ok("init", cwd=str(project))
    assert again.stdout.splitlines()[0] == f"Hippo already initialized at {project / '.hippo'}"
    assert not any("Auto-installed" in line for line in again.stdout.splitlines())
    registered = "Already registered for the daily 06:15 run; per-user service hippod.service already"
    registered += " installed"
    assert f"   {registered}" in again.stdout.splitlines()
    assert _wired_files(hippo, project) == before
    assert _count(project / ".hippo" / "hippo.db") == memories
    # An installed, enabled service is left alone: init only asks whether it is enabled.
    assert hippo.service_calls()[calls:] == [
        "systemctl --user is-enabled hippod.service",
        "systemctl --user is-active hippod.service",
    ]
    assert (project / ".hippo" / "backups" / "CLAUDE.md").read_text() == USER_TEXT


def test_a_service_init_could_not_enable_is_a_warning_and_the_next_init_enables_it(
    hippo: Hippo, tmp_path: Path
) -> None:
    hippo.start()
    hippo.service_manager(reachable=False)
    project = _claude_project(tmp_path, lessons=False)
    (project / ".hippo").mkdir()
    done = hippo.ctl("init", cwd=str(project))
    assert done.returncode == 0, done.stderr  # the store, hooks and registry are all in place
    assert done.stdout.splitlines()[-1] == (
        "   Registered for the daily 06:15 run; per-user service hippod.service enabled for the next "
        "login, not started (see the warning)"
    )
    [warning] = [line for line in done.stderr.splitlines() if "hippod.service" in line]
    assert warning.startswith("hippod.service is enabled for the next login but not started: ")
    assert "Failed to connect to bus: No medium found" in warning

    # Disabled since: the next init enables it again, now that systemd can be reached.
    hippo.service_manager(reachable=True, hippod_service_enabled="disabled")
    calls = len(hippo.service_calls())
    done = hippo.ok("init", cwd=str(project))
    assert done.stdout.splitlines()[-1] == (
        "   Already registered for the daily 06:15 run; installed per-user service hippod.service"
    )
    assert done.stderr == ""
    assert "systemctl --user enable --now hippod.service" in hippo.service_calls()[calls:]


def test_an_edited_block_is_left_alone_and_reported(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    project = _claude_project(tmp_path, lessons=False)
    hippo.ok("init", cwd=str(project))
    text = (project / "CLAUDE.md").read_text()
    edited = text.replace("## Project Memory (Hippo)", "## Project Memory (Hippo)\n\nMy own extra rule.")
    (project / "CLAUDE.md").write_text(edited)
    done = hippo.ok("init", cwd=str(project))
    assert f"edited hippo block in {project / 'CLAUDE.md'} left alone" in done.stderr
    assert (project / "CLAUDE.md").read_text() == edited


def test_files_init_cannot_read_are_reported_and_the_rest_is_wired(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    project = _claude_project(tmp_path, lessons=False)
    (project / "CLAUDE.md").write_bytes(b"# Caf\xe9\r\n")  # Latin-1, as an older editor saved it
    done = hippo.ctl("init", "--no-schedule", cwd=str(project))
    assert done.returncode == 0, done.stderr
    assert f"{project / 'CLAUDE.md'} is not UTF-8 text; left alone" in done.stderr
    assert (project / "CLAUDE.md").read_bytes() == b"# Caf\xe9\r\n"
    assert len(_hook_commands(_settings(hippo))) == 7


def test_init_wires_linked_instruction_files_and_opencode_json_as_hook_install_does(
    hippo: Hippo, tmp_path: Path
) -> None:
    hippo.start()
    project = _claude_project(tmp_path, lessons=False)
    (project / "AGENTS.md").symlink_to("CLAUDE.md")
    stray = {"model": "x", "hooks": {"session.idle": [{"command": "hippoctl session-end"}]}}
    (project / "opencode.json").write_text(json.dumps(stray))
    hippo.ok("init", "--no-schedule", cwd=str(project))
    claude_md = (project / "CLAUDE.md").read_text()
    assert (project / "AGENTS.md").is_symlink() and claude_md.count(START) == 1
    assert json.loads((project / "opencode.json").read_text()) == {"model": "x"}
    again = hippo.ok("init", "--no-schedule", cwd=str(project))
    assert (project / "CLAUDE.md").read_text() == claude_md and " block in " not in again.stdout


def test_init_writes_the_opencode_plugin_where_opencode_is_installed(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    project = make_repo(tmp_path / "tool")
    (project / "AGENTS.md").write_text(USER_TEXT)
    plugin = Path(hippo.env["XDG_CONFIG_HOME"], "opencode", "plugins", "hippo.ts")
    plugin.parent.parent.mkdir(parents=True)  # ~/.config/opencode/: OpenCode is installed
    done = hippo.ok("init", "--no-schedule", cwd=str(project))
    assert f"   Auto-installed OpenCode plugin {plugin}" in done.stdout.splitlines()
    assert plugin.read_text().startswith("// HIPPO_OPENCODE_PLUGIN_V1 (hippod)\n")
    row = {r["target"]: r for r in hippo.json("hook", "list", cwd=str(project))["targets"]}["opencode"]
    assert row["detected"] and row["state"] == "installed", row
    before = plugin.read_bytes()
    again = hippo.ok("init", "--no-schedule", cwd=str(project))
    assert "OpenCode" not in again.stdout and plugin.read_bytes() == before


def test_opt_outs_leave_only_the_store(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    project = _claude_project(tmp_path)
    done = hippo.ok("init", "--no-hooks", "--no-schedule", "--no-learn", cwd=str(project))
    assert (project / ".hippo" / "hippo.db").is_file()
    assert (project / "CLAUDE.md").read_text() == USER_TEXT
    assert not _settings(hippo).exists()
    assert not _unit(hippo).exists()
    assert hippo.service_calls() == []
    assert not (Path(hippo.home) / "workspaces.json").exists()
    assert _count(project / ".hippo" / "hippo.db") == 0
    assert "Learned" not in done.stdout and "Registered" not in done.stdout


def test_skip_auto_integrations_wires_no_agent(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    project = _claude_project(tmp_path, lessons=False)
    env = dict(hippo.env, HIPPO_SKIP_AUTO_INTEGRATIONS="1")
    done = hippo.ctl("init", "--no-schedule", cwd=str(project), env=env)
    assert done.returncode == 0, done.stderr
    assert (project / "CLAUDE.md").read_text() == USER_TEXT
    assert not _settings(hippo).exists()


def test_a_store_further_up_is_reported_as_shadowed(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    outer = tmp_path / "mono"
    inner = outer / "services" / "api"
    inner.mkdir(parents=True)
    hippo.ok("init", "--no-schedule", cwd=str(outer))
    done = hippo.ok("init", "--no-schedule", cwd=str(inner))
    assert f"   This store shadows {outer / '.hippo'} for {inner} and below" in done.stdout.splitlines()


def test_scan_finds_repositories_and_writes_no_blocks(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    code = tmp_path / "code"
    first = make_repo(code / "alpha")
    (first / "CLAUDE.md").write_text(USER_TEXT)
    commit(first, "fix: quote paths with spaces in the installer", days_ago=200)  # inside 365 days
    second = make_repo(code / "clients" / "beta")
    make_repo(code / ".hidden" / "gamma")  # dot folders are skipped
    make_repo(code / "node_modules" / "delta")  # and node_modules
    make_repo(first / "vendor" / "epsilon")  # a found repository is not descended into
    make_repo(code / "a" / "b" / "c" / "zeta")  # depth 4: too deep
    done = hippo.ok("init", "--scan", str(code), cwd=str(tmp_path))
    stores = {p.parent.name for p in code.rglob(".hippo")}
    assert stores == {"alpha", "beta"}
    assert (first / "CLAUDE.md").read_text() == USER_TEXT  # no block with --scan
    assert len(_hook_commands(_settings(hippo))) == 7  # but the user-level Claude Code wiring
    assert _count(first / ".hippo" / "hippo.db", "source = 'git-learn'") == 1
    registry = json.loads((Path(hippo.home) / "workspaces.json").read_text())["workspaces"]
    assert sorted(registry) == sorted([str(first), str(second)])
    assert f"Initialized Hippo at {first / '.hippo'}" in done.stdout


def test_init_global_creates_the_global_store_only(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    project = _claude_project(tmp_path, lessons=False)
    done = hippo.ok("init", "--global", cwd=str(project))
    # The daemon opens the global store when it starts, so init finds it there.
    assert done.stdout.splitlines()[0] == f"Hippo already initialized at {os.path.realpath(hippo.home)}"
    assert "   Imported 0 user-level agent notes" in done.stdout.splitlines()
    assert (Path(hippo.home) / "hippo.db").is_file()
    assert not (project / ".hippo").exists()
    assert (project / "CLAUDE.md").read_text() == USER_TEXT
    assert not _unit(hippo).exists()


def _setup_files(hippo: Hippo) -> dict[str, Any]:
    """Every file under the test's root but the daemon's own: its state, logs and the global store's
    database, which the daemon's start-up work may still be writing while setup runs."""
    root = Path(hippo.root)
    return {
        str(p): p.stat().st_mtime_ns
        for p in root.rglob("*")
        if p.is_file() and "daemon" not in p.name and not p.name.startswith("hippo.db")
    }


def test_setup_dry_run_changes_nothing_and_setup_wires_the_machine(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    (Path(hippo.user_home) / ".claude").mkdir()
    before = _setup_files(hippo)
    plan = hippo.ok("setup", "--dry-run")
    assert "Would install the user-level claude-code wiring" in plan.stdout
    assert "Would install the per-user service hippod.service" in plan.stdout
    after = {k: v for k, v in _setup_files(hippo).items() if not k.endswith(".log")}
    assert after == {k: v for k, v in before.items() if not k.endswith(".log")}
    assert hippo.service_calls() == []
    done = hippo.ok("setup")
    assert len(_hook_commands(_settings(hippo))) == 7
    assert _unit(hippo).is_file()
    assert "Imported 0 user-level agent notes" in done.stdout
    data = hippo.json("setup")
    assert data["targets"] == ["claude-code"] and data["service"] == "hippod.service"
    plan = hippo.ok("setup", "--dry-run")  # the plan names only what is left to do
    assert "User-level claude-code wiring already installed" in plan.stdout
    assert "Would install" not in plan.stdout


def test_codex_hooks_go_in_only_where_codex_is_installed(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start()
    project = tmp_path / "svc"
    project.mkdir()
    (project / "AGENTS.md").write_text(USER_TEXT)
    done = hippo.ok("init", "--no-schedule", "--no-learn", cwd=str(project))
    assert "Codex" not in done.stderr  # no Codex home: nothing to say about its hooks
    assert START in (project / "AGENTS.md").read_text()
    codex_home = Path(hippo.user_home) / ".codex"
    assert not codex_home.exists()
    codex_home.mkdir()
    done = hippo.ok("init", "--no-schedule", "--no-learn", cwd=str(project))
    hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert sorted(hooks) == ["SessionStart", "UserPromptSubmit"]
    assert "/hooks" in done.stderr  # the reminder to trust them once
