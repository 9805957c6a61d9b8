"""End-to-end: the commands the CLAUDE.md / AGENTS.md blocks give agents start in an agent's shell
(`/bin/sh -c`, `PATH=/usr/bin:/bin`, no XDG_RUNTIME_DIR) and do their job; an older block whose bare
`hippoctl` an agent's shell cannot find is reported by `hook list` and `doctor`, and `init`, `setup`
and `hook install` rewrite it in place (integrations.md §4, §12)."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippod.integrations import blocks

if TYPE_CHECKING:
    from e2e.harness import Hippo

START, END = "<!-- hippo:start -->", "<!-- hippo:end -->"
USER_MD = "# Shop\n\nThe API lives in api/.\n"
AFTER_MD = "\n## Deploying\n\nRun `make release`.\n"
SUMMARY = "- Decided: releases are cut from main only\n- Lesson: the deploy needs AWS_PROFILE\n"
# The blocks earlier versions wrote: every command starts with a bare `hippoctl`.
OLD_CLAUDE, OLD_AGENTS = (blocks.BODIES[(variant, 1)] for variant in (blocks.CLAUDE, blocks.AGENTS))
BARE_PATH = "/usr/bin:/bin"


def agent_env(hippo: Hippo) -> dict[str, str]:
    """The environment an agent's shell tool runs commands with: a bare PATH, no XDG_RUNTIME_DIR."""
    env = {k: v for k, v in hippo.env.items() if k != "XDG_RUNTIME_DIR"}
    env["PATH"] = BARE_PATH
    return env


def block_of(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text[text.index(START) + len(START) : text.index(END)]


def commands_in(block: str) -> list[str]:
    """The block's inline code that runs hippoctl, as an agent reads it off the page."""
    return [code for code in re.findall(r"`([^`\n]+)`", block) if "hippoctl" in code]


def run_as_agent(hippo: Hippo, command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    stdin = SUMMARY if command.endswith("capture --stdin") else ""
    return subprocess.run(
        ["/bin/sh", "-c", command],
        env=agent_env(hippo),
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def shop(hippo: Hippo, claude: str = USER_MD, agents: str = USER_MD) -> Path:
    folder = Path(hippo.root, "shop")
    folder.mkdir()
    (folder / "CLAUDE.md").write_text(claude, encoding="utf-8")
    (folder / "AGENTS.md").write_text(agents, encoding="utf-8")
    return folder


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def assert_commands_do_their_job(hippo: Hippo, folder: Path, prefix: str) -> None:
    """Every command of both blocks starts with `prefix`, exits 0 in an agent's shell, and does what
    the block says it does."""
    found = dict.fromkeys(
        c for name in ("CLAUDE.md", "AGENTS.md") for c in commands_in(block_of(folder / name))
    )
    assert len(found) == 4, found
    outputs = {}
    for command in found:
        done = run_as_agent(hippo, command, folder)
        assert (done.returncode, done.stderr) == (0, ""), (command, done.returncode, done.stderr)
        assert command.startswith(f"{prefix} "), command
        outputs[command.removeprefix(prefix + " ").split()[0]] = done.stdout
    assert "Deploys go through make release" in outputs["context"]
    db = folder / ".hippo" / "hippo.db"
    assert rows(db, "SELECT count(*) FROM memories WHERE content = '<what went wrong and why>'") == [(1,)]
    assert rows(db, "SELECT count(*) FROM memories WHERE content = '<what you learned and why>'") == [(1,)]


def test_the_commands_init_writes_into_the_blocks_start_in_an_agents_shell(hippo: Hippo) -> None:
    hippo.start()
    folder = shop(hippo)
    hippo.ok("init", "--no-schedule", "--no-learn", cwd=str(folder))
    hippo.ok("remember", "Deploys go through make release", "--pin", cwd=str(folder))
    # The harness runs the client as `<python> -m hippoctl`: that is how the blocks name it.
    assert_commands_do_their_job(hippo, folder, f"{sys.executable} -m hippoctl")
    for name in ("CLAUDE.md", "AGENTS.md"):
        assert (folder / name).read_text(encoding="utf-8").startswith(USER_MD)


def test_a_client_installed_under_home_is_named_from_the_home_folder(hippo: Hippo) -> None:
    """As pipx and uv tool install it: ~/.local/bin/hippoctl, which teammates share as text."""
    hippo.start()
    script = Path(hippo.user_home, ".local", "bin", "hippoctl")
    script.parent.mkdir(parents=True)
    script.symlink_to(Path(sys.executable).parent / "hippoctl")
    folder = shop(hippo)
    done = subprocess.run(
        [str(script), "init", "--no-schedule", "--no-learn"],
        env=hippo.env,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    hippo.ok("remember", "Deploys go through make release", "--pin", cwd=str(folder))
    assert_commands_do_their_job(hippo, folder, "~/.local/bin/hippoctl")
    # The hooks, in the user's own settings, keep the absolute path.
    settings = json.loads(Path(hippo.user_home, ".claude", "settings.json").read_text())
    hooks = [h["command"] for entries in settings["hooks"].values() for e in entries for h in e["hooks"]]
    assert hooks and all(h.startswith(f"{script} ") for h in hooks)


def doctor_blocks(hippo: Hippo, folder: Path) -> tuple[int, list[dict[str, Any]]]:
    done = hippo.ctl("--json", "doctor", cwd=str(folder), timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, [c for c in json.loads(done.stdout)["checks"] if c["name"] == "Blocks"]


def test_old_blocks_of_bare_hippoctl_fail_doctor_and_setup_rewrites_them_in_place(hippo: Hippo) -> None:
    hippo.start()
    claude_md = f"{USER_MD}\n{START}\n{OLD_CLAUDE}\n{END}\n{AFTER_MD}"
    agents_md = f"{USER_MD}\n{START}\n{OLD_AGENTS}\n{END}\n"
    folder = shop(hippo, claude_md, agents_md)
    hippo.ok("init", "--no-schedule", "--no-learn", "--no-hooks", cwd=str(folder))  # a store, no wiring
    hippo.ok("remember", "Deploys go through make release", "--pin", cwd=str(folder))

    # What an agent met: `hippoctl: not found`, exit 127.
    for command in commands_in(block_of(folder / "CLAUDE.md")):
        done = run_as_agent(hippo, command, folder)
        assert done.returncode == 127 and "not found" in done.stderr, (command, done)

    rows_by_target = {r["target"]: r for r in hippo.json("hook", "list", cwd=str(folder))["targets"]}
    assert rows_by_target["claude-code"]["files"][0]["state"] == "outdated"
    assert rows_by_target["codex"]["files"][0]["state"] == "outdated"
    code, checks = doctor_blocks(hippo, folder)
    assert code == 1
    warned = [(c["status"], c["message"]) for c in checks if c["status"] == "warn"]
    assert warned == [
        ("warn", f"an outdated hippo block in {folder / name}") for name in ("CLAUDE.md", "AGENTS.md")
    ]
    failed = [c for c in checks if c["status"] == "fail"]
    assert len(failed) == 6  # 2 commands in CLAUDE.md, 4 in AGENTS.md
    first = failed[0]
    assert first["message"].startswith(f"{folder / 'CLAUDE.md'}: `hippoctl context --auto --budget 1500` ")
    assert (
        f"cannot start with PATH={BARE_PATH} (exit 127: " in first["message"]
        and "not found" in first["message"]
    )
    assert first["fix"] == "hippoctl hook install claude-code"
    assert all(c["fix"] == "hippoctl hook install codex" for c in failed[2:])

    out = hippo.ok("setup", "--no-schedule", cwd=str(folder)).stdout
    for name in ("CLAUDE.md", "AGENTS.md"):
        assert f"Updated hippo block in {folder / name}" in out
    claude_text = (folder / "CLAUDE.md").read_text(encoding="utf-8")
    assert claude_text.startswith(f"{USER_MD}\n{START}\n") and claude_text.endswith(f"{END}\n{AFTER_MD}")
    assert claude_text.count(START) == 1
    assert_commands_do_their_job(hippo, folder, f"{sys.executable} -m hippoctl")
    code, checks = doctor_blocks(hippo, folder)
    assert [(c["status"], c["message"]) for c in checks] == [
        ("ok", f"current hippo block in {folder / 'CLAUDE.md'}"),
        ("ok", f"current hippo block in {folder / 'AGENTS.md'}"),
        ("ok", f"all 6 commands of the hippo blocks start with PATH={BARE_PATH}, as agents run them"),
    ]
    assert "Updated" not in hippo.ok("setup", "--no-schedule", cwd=str(folder)).stdout  # nothing left to do


def test_init_and_hook_install_rewrite_an_old_block_in_place(hippo: Hippo) -> None:
    hippo.start()
    folder = shop(hippo, f"{USER_MD}\n{START}\n{OLD_CLAUDE}\n{END}\n{AFTER_MD}", USER_MD)
    out = hippo.ok("init", "--no-schedule", "--no-learn", cwd=str(folder)).stdout
    assert "Updated claude-code block in CLAUDE.md" in out
    text = (folder / "CLAUDE.md").read_text(encoding="utf-8")
    assert text.endswith(f"{END}\n{AFTER_MD}") and "`hippoctl " not in text

    (folder / "AGENTS.md").write_text(f"{USER_MD}\n{START}\n{OLD_AGENTS}\n{END}\n", encoding="utf-8")
    out = hippo.ok("hook", "install", "codex", cwd=str(folder)).stdout
    assert f"Updated codex block in {folder / 'AGENTS.md'}" in out
    hippo.ok("remember", "Deploys go through make release", "--pin", cwd=str(folder))
    assert_commands_do_their_job(hippo, folder, f"{sys.executable} -m hippoctl")


def test_doctor_fails_an_edited_block_whose_commands_cannot_start(hippo: Hippo) -> None:
    hippo.start()
    mine = "## Project Memory (Hippo)\n\nAsk `hippoctl-nightly recall deploys` before `hippoctl status`.\n"
    folder = shop(hippo, f"{START}\n{mine}{END}\n", USER_MD)
    hippo.ok("init", "--no-schedule", "--no-learn", "--no-hooks", cwd=str(folder))
    code, checks = doctor_blocks(hippo, folder)
    assert code == 1
    [failed] = [c for c in checks if c["status"] == "fail"]  # `hippoctl-nightly` is not hippoctl
    assert failed["message"].startswith(f"{folder / 'CLAUDE.md'}: `hippoctl status` cannot start")
    remove = f"remove the block between the hippo markers in {folder / 'CLAUDE.md'}"
    assert failed["fix"] == f"{remove}, then hippoctl hook install claude-code"
