"""End-to-end: the commands the CLAUDE.md / AGENTS.md blocks give agents start in an agent's shell
(`/bin/sh -c`, `PATH=/usr/bin:/bin`, no XDG_RUNTIME_DIR) and do their job; an older block whose bare
`hippoctl` an agent's shell cannot find is reported by `hook list` and `doctor`, and `init`, `setup`
and `hook install` rewrite it in place; a teammate's block that starts a hippoctl here stays; doctor
runs a block's command only when it is hippod's own, under this client (integrations.md §4, §12)."""

from __future__ import annotations

import json
import re
import shlex
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
# How the harness's client names itself in the blocks it writes (it runs as `<python> -m hippoctl`).
OWN = shlex.join([sys.executable, "-m", "hippoctl"])


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
    assert_commands_do_their_job(hippo, folder, OWN)
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
    # Doctor fails both blocks without running a command of theirs: a bare name is no path.
    code, checks = doctor_blocks(hippo, folder)
    assert code == 1
    assert [(c["status"], c["message"], c["fix"]) for c in checks] == [
        (
            "fail",
            f"an outdated hippo block in {folder / name}: its commands start `hippoctl`, "
            "not a path to a hippoctl here",
            "hippoctl setup",
        )
        for name in ("CLAUDE.md", "AGENTS.md")
    ]

    out = hippo.ok("setup", "--no-schedule", cwd=str(folder)).stdout
    for name in ("CLAUDE.md", "AGENTS.md"):
        assert f"Updated hippo block in {folder / name}" in out
    claude_text = (folder / "CLAUDE.md").read_text(encoding="utf-8")
    assert claude_text.startswith(f"{USER_MD}\n{START}\n") and claude_text.endswith(f"{END}\n{AFTER_MD}")
    assert claude_text.count(START) == 1
    assert_commands_do_their_job(hippo, folder, OWN)
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
    assert_commands_do_their_job(hippo, folder, OWN)


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_doctor_runs_no_command_the_repository_put_in_a_block(hippo: Hippo) -> None:
    """A block is the repository's text: doctor runs only hippod's own commands under this client,
    word for word; whatever else a block says it reports and never runs."""
    hippo.start()
    pwned = [Path(hippo.root, f"pwned-{n}") for n in range(3)]
    edited = (
        "## Project Memory (Hippo)\n\n"
        f"- `hippoctl status; touch {pwned[0]}`\n"
        f"- `{OWN} context --auto --budget 1500 $(touch {pwned[1]})`\n"
        "- `./tools/hippoctl x`\n"
        f"- `{OWN} context --auto --budget 1500`\n"  # hippod's own: it runs
        "- `hippoctl-nightly recall deploys`\n"  # no hippoctl: not the block's business
    )
    folder = shop(hippo, f"{START}\n{edited}{END}\n")
    # The shipped wording, word for word, under a script of the repository's own.
    (folder / "AGENTS.md").write_text(
        blocks.render(blocks.AGENTS, "./tools/hippoctl") + "\n", encoding="utf-8"
    )
    script(folder / "tools" / "hippoctl", f"touch {pwned[2]}")
    hippo.ok("init", "--no-schedule", "--no-learn", "--no-hooks", cwd=str(folder))
    claude_md, agents_md = folder / "CLAUDE.md", folder / "AGENTS.md"

    code, checks = doctor_blocks(hippo, folder)
    assert [p for p in pwned if p.exists()] == []
    assert code == 1
    fix = f"remove the block between the hippo markers in {claude_md}, then hippoctl hook install claude-code"
    not_run = "is not a command of hippod's block (edited), so doctor does not run it"
    assert [(c["status"], c["message"], c.get("fix")) for c in checks] == [
        ("warn", f"edited hippo block in {claude_md} (left alone by install)", fix),
        ("warn", f"{claude_md}: `hippoctl status; touch {pwned[0]}` {not_run}", fix),
        ("warn", f"{claude_md}: `{OWN} context --auto --budget 1500 $(touch {pwned[1]})` {not_run}", fix),
        ("warn", f"{claude_md}: `./tools/hippoctl x` {not_run}", fix),
        (
            "fail",
            f"an outdated hippo block in {agents_md}: its commands start `./tools/hippoctl`, "
            "not a path to a hippoctl here",
            "hippoctl setup",
        ),
        ("ok", f"the 1 command of the hippo blocks start with PATH={BARE_PATH}, as agents run them", None),
    ]
    # The relative script is no client: setup puts this one's block in its place.
    assert f"Updated hippo block in {agents_md}" in hippo.ok("setup", "--no-schedule", cwd=str(folder)).stdout
    assert commands_in(block_of(agents_md))[0] == f"{OWN} context --auto --budget 1500"
    assert [p for p in pwned if p.exists()] == []


def test_a_teammates_block_stays_where_its_hippoctl_is_here_and_doctor_does_not_run_it(hippo: Hippo) -> None:
    """A committed block under a teammate's `~/.local/bin/hippoctl` counts as current where that path
    is a hippoctl too; under a path this machine lacks it is outdated, and setup rewrites it."""
    hippo.start()
    ran = Path(hippo.root, "teammate-hippoctl-ran")
    real = Path(sys.executable).parent / "hippoctl"
    script(Path(hippo.user_home, ".local", "bin", "hippoctl"), f'touch {ran}\nexec {real} "$@"')
    theirs = "~/.local/bin/hippoctl"
    gone = "/home/alice-elsewhere/.venv/bin/hippoctl"
    claude = f"{USER_MD}\n{blocks.render(blocks.CLAUDE, theirs)}\n{AFTER_MD}"
    folder = shop(hippo, claude, f"{USER_MD}\n{blocks.render(blocks.AGENTS, gone)}\n")
    claude_md, agents_md = folder / "CLAUDE.md", folder / "AGENTS.md"
    hippo.ok("init", "--no-schedule", "--no-learn", "--no-hooks", cwd=str(folder))

    rows_by_target = {r["target"]: r for r in hippo.json("hook", "list", cwd=str(folder))["targets"]}
    assert rows_by_target["claude-code"]["files"][0]["state"] == "installed"
    assert rows_by_target["codex"]["files"][0]["state"] == "outdated"
    code, checks = doctor_blocks(hippo, folder)
    assert code == 1
    assert [(c["status"], c["message"], c.get("fix")) for c in checks] == [
        (
            "ok",
            f"current hippo block in {claude_md}, under {theirs} (a hippoctl here, not this one: not run)",
            None,
        ),
        (
            "fail",
            f"an outdated hippo block in {agents_md}: its commands start `{gone}`, "
            "not a path to a hippoctl here",
            "hippoctl setup",
        ),
    ]

    out = hippo.ok("setup", "--no-schedule", cwd=str(folder)).stdout
    assert f"Updated hippo block in {agents_md}" in out and str(claude_md) not in out
    hippo.ok("hook", "install", "claude-code", cwd=str(folder))
    hippo.ok("init", "--no-schedule", "--no-learn", cwd=str(folder))
    assert claude_md.read_text(encoding="utf-8") == claude
    assert commands_in(block_of(agents_md))[0] == f"{OWN} context --auto --budget 1500"
    code, checks = doctor_blocks(hippo, folder)
    assert [(c["status"], c["message"]) for c in checks][1:] == [
        ("ok", f"current hippo block in {agents_md}"),
        ("ok", f"all 4 commands of the hippo blocks start with PATH={BARE_PATH}, as agents run them"),
    ]
    assert not ran.exists()
