"""A new user's first minutes, scripted: a fresh HOME, a fresh venv, `pip install .` of this source
tree, then `hippoctl init` in a project with a CLAUDE.md (issue 7's "check as a new user would").

Nothing here sets HIPPO_HOME or HIPPO_SOCKET: the daemon runs on its default store and socket,
which the test's own XDG folders put under a temporary root. The service manager is the recording
stand-in (tests/e2e/fakebin), so no unit is ever enabled on the machine running the test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from e2e.gitrepo import commit, make_repo
from e2e.harness import FAKEBIN, SCRUBBED_VARS, pid_alive, terminate_pid

REPO = Path(__file__).resolve().parents[2]
# Build and tool leftovers a fresh clone would not have.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", "build", "dist", "*.egg-info", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"
)
USER_TEXT = "# Shop\n\nThe API lives in api/, the web app in web/.\n"
PINNED = "Deploys go through make release and never by hand"
# The seven entries of integrations.md §3: (event, matcher, command, timeout).
CLAUDE_ENTRIES = [
    ("SessionEnd", None, "hippoctl session-end", 5),
    ("SessionStart", None, "hippoctl last-sleep", 5),
    ("SessionStart", "compact", "hippoctl compact-resume", 10),
    (
        "UserPromptSubmit",
        None,
        "hippoctl context --pinned-only --include-recent 5 --format additional-context",
        5,
    ),
    ("PreCompact", None, "hippoctl pre-compact", 30),
    ("PostCompact", None, "hippoctl post-compact", 30),
    ("PostToolUseFailure", None, "hippoctl capture-error", 5),
]


def _fresh_env(root: Path, venv: Path) -> dict[str, str]:
    """The inherited environment with a new HOME and XDG folders, and the venv first on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_VARS and k != "VIRTUAL_ENV"}
    # pip's cache stays the machine's own, so the install reuses what is already downloaded.
    env.setdefault("PIP_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache", "pip"))
    home = root / "home"
    home.mkdir()
    for name in ("data", "state", "cache", "config", "runtime"):
        (root / name).mkdir(mode=0o700)
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(root / "data"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_RUNTIME_DIR=str(root / "runtime"),
        PATH=os.pathsep.join([str(venv / "bin"), FAKEBIN, os.environ.get("PATH", "")]),
        FAKEBIN_LOG=str(root / "fakebin.log"),
        GIT_AUTHOR_NAME="hippo test",
        GIT_AUTHOR_EMAIL="test@hippo.invalid",
        GIT_COMMITTER_NAME="hippo test",
        GIT_COMMITTER_EMAIL="test@hippo.invalid",
    )
    return env


def _run(
    args: list[str], env: dict[str, str], cwd: Path, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, cwd=cwd, input=input, capture_output=True, text=True, timeout=300)


@pytest.fixture
def newcomer() -> Iterator[tuple[Path, dict[str, str]]]:
    """A fresh root with a venv holding a plain (not editable) install of this source tree."""
    root = Path(tempfile.mkdtemp(prefix="nu", dir="/tmp"))
    venv = root / "venv"
    env = _fresh_env(root, venv)
    try:
        source = root / "src"
        shutil.copytree(REPO, source, ignore=NOT_SOURCE)
        made = _run([sys.executable, "-m", "venv", str(venv)], env, root)
        assert made.returncode == 0, made.stderr
        install = _run([str(venv / "bin" / "pip"), "install", "-q", str(source)], env, root)
        assert install.returncode == 0, install.stderr[-2000:]
        yield root, env
    finally:
        _stop_daemon(root, env)
        shutil.rmtree(root, ignore_errors=True)


def _stop_daemon(root: Path, env: dict[str, str]) -> None:
    hippoctl = root / "venv" / "bin" / "hippoctl"
    if not hippoctl.exists():
        return
    done = _run([str(hippoctl), "--no-spawn", "--json", "version"], env, root)
    try:
        daemon = json.loads(done.stdout).get("daemon")
    except ValueError:
        return
    if daemon:
        terminate_pid(int(daemon["pid"]))


def test_pip_install_then_init_wires_a_claude_code_project(newcomer: tuple[Path, dict[str, str]]) -> None:
    root, env = newcomer
    hippoctl = str(root / "venv" / "bin" / "hippoctl")
    project = make_repo(root / "shop")
    (project / "CLAUDE.md").write_text(USER_TEXT)
    commit(project, "fix: release builds must pin the node version", days_ago=2)

    done = _run([hippoctl, "init"], env, project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"Initialized Hippo at {project / '.hippo'}"

    # The project is wired: its store, its instruction block, its git lesson.
    assert (project / ".hippo" / "hippo.db").is_file()
    claude_md = (project / "CLAUDE.md").read_text()
    assert claude_md.startswith(USER_TEXT) and "<!-- hippo:start -->" in claude_md
    assert "Learned 1 lesson from 30 days of git history" in done.stdout

    # ~/.claude/settings.json holds the seven entries, calling the hippoctl on PATH.
    settings = json.loads((root / "home" / ".claude" / "settings.json").read_text())
    found = [
        (event, entry.get("matcher"), hook["command"], hook["timeout"])
        for event, entries in settings["hooks"].items()
        for entry in entries
        for hook in entry["hooks"]
    ]
    assert sorted(found, key=str) == sorted(CLAUDE_ENTRIES, key=str)

    # The daemon is running and reachable, and the per-user service was installed for the next login.
    version = _run([hippoctl, "--no-spawn", "--json", "version"], env, project)
    daemon = json.loads(version.stdout)["daemon"]
    assert daemon is not None and pid_alive(int(daemon["pid"]))
    unit = (root / "config" / "systemd" / "user" / "hippod.service").read_text()
    assert f"ExecStart={root / 'venv' / 'bin' / 'python'}" in unit
    calls = (root / "fakebin.log").read_text().splitlines()
    assert any(c.startswith("systemctl --user enable") and "hippod.service" in c for c in calls)

    # The installed UserPromptSubmit command, run as Claude Code runs it, returns context.
    pinned = _run([hippoctl, "remember", PINNED, "--pin"], env, project)
    assert pinned.returncode == 0, pinned.stderr
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    payload = {
        "session_id": "3f1c2a9e-new-user",
        "transcript_path": str(root / "home" / ".claude" / "projects" / "shop" / "t.jsonl"),
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "How do I ship this?",
    }
    hook = _run(["/bin/sh", "-c", command], env, project, input=json.dumps(payload))
    assert hook.returncode == 0, hook.stderr
    output = json.loads(hook.stdout)
    assert output["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert PINNED in output["hookSpecificOutput"]["additionalContext"]
