"""A new user's first minutes, scripted: a fresh HOME, a fresh venv, `pip install .` of this source
tree, then `hippoctl init` in a project, and every command it installed run as its agent host runs it.

Nothing here sets HIPPO_HOME or HIPPO_SOCKET: the daemon runs on its default store and socket,
which the test's own XDG folders put under a temporary root. The service manager is the recording
stand-in (tests/e2e/fakebin), so no unit is ever enabled on the machine running the test.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from e2e.gitrepo import commit, make_repo
from e2e.harness import FAKEBIN, SCRUBBED_VARS, pid_alive, terminate_pid
from e2e.hook_table import CLAUDE_TABLE
from e2e.transcripts import claude_records, write_jsonl

REPO = Path(__file__).resolve().parents[2]
USER_TEXT = "# Shop\n\nThe API lives in api/, the web app in web/.\n"
PINNED = "Deploys go through make release and never by hand"
# The PATH an agent host may well run its hooks with: nothing of the user's virtualenv on it.
BARE_PATH = "/usr/bin:/bin"
SESSION = "3f1c2a9e-new-user"
SLEEP_HEADER = "=== Previous session hippo consolidation ==="
CONFLICT = (
    "The feature flag is enabled for production users",
    "The feature flag is disabled for production users",
)
WAIT = 60.0


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


def _copy_source(dest: Path) -> None:
    """Copy what a fresh clone would hold, with this checkout's edits: the files git tracks or
    would track, not the virtualenv, caches and build leftovers it ignores."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        if (REPO / name).is_file():  # a tracked file deleted in the work tree is not copied
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)


@pytest.fixture(scope="session")
def venv(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """A venv holding a plain (not editable) install of this source tree, built once per run.

    The module's tests may run on different xdist workers at once: the first to get here builds it
    under a lock in the run's own temporary folder, which every worker of the run shares; pytest
    removes it with the run's other temporary folders.
    """
    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent
    root = shared / "new-user"
    venv = root / "venv"
    with open(shared / "new-user.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "ready").exists():
            shutil.rmtree(root, ignore_errors=True)  # a build that failed half-way
            root.mkdir()
            env = _fresh_env(root, venv)
            source = root / "src"
            _copy_source(source)
            made = _run([sys.executable, "-m", "venv", str(venv)], env, root)
            assert made.returncode == 0, made.stderr
            # --no-compile: writing bytecode for every installed module (numpy and scipy among
            # them) is a third of the install's time and tells nothing about hippod.
            pip = [str(venv / "bin" / "pip"), "install", "-q", "--no-compile", str(source)]
            install = _run(pip, env, root)
            assert install.returncode == 0, install.stderr[-2000:]
            (root / "ready").touch()
    return venv


@dataclass(frozen=True)
class Newcomer:
    """A fresh root (HOME, XDG folders) whose PATH starts with the installed venv's bin/."""

    root: Path
    env: dict[str, str]
    venv: Path

    @property
    def hippoctl(self) -> str:
        return str(self.venv / "bin" / "hippoctl")


@pytest.fixture
def newcomer(venv: Path) -> Iterator[Newcomer]:
    root = Path(tempfile.mkdtemp(prefix="nu", dir="/tmp"))
    user = Newcomer(root, _fresh_env(root, venv), venv)
    try:
        yield user
    finally:
        _stop_daemon(user)
        shutil.rmtree(root, ignore_errors=True)


def _stop_daemon(user: Newcomer) -> None:
    done = _run([user.hippoctl, "--no-spawn", "--json", "version"], user.env, user.root)
    try:
        daemon = json.loads(done.stdout).get("daemon")
    except ValueError:
        return
    if daemon:
        terminate_pid(int(daemon["pid"]))


@pytest.mark.long
def test_the_installed_package_carries_the_embedders_vocabulary(venv: Path) -> None:
    # The embed extra brings the model's weights; its vocabulary ships inside hippod itself, so a
    # plain install must hold it, word for word, for the extra to work once added.
    [shipped] = venv.glob("lib/python*/site-packages/hippod/embed/data/minilm_vocab.txt")
    source = Path(__file__).resolve().parents[2] / "hippod" / "embed" / "data" / "minilm_vocab.txt"
    assert shipped.read_bytes() == source.read_bytes()
    assert len(shipped.read_text(encoding="utf-8").splitlines()) == 30522


def test_pip_install_then_init_wires_a_claude_code_project(newcomer: Newcomer) -> None:
    root, env, hippoctl = newcomer.root, newcomer.env, newcomer.hippoctl
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

    # ~/.claude/settings.json holds the seven entries, calling the installed hippoctl by its path.
    settings = json.loads((root / "home" / ".claude" / "settings.json").read_text())
    assert sorted(_entries(settings), key=str) == sorted(
        [
            (event, matcher, f"{hippoctl} {suffix}", timeout)
            for event, matcher, suffix, timeout in CLAUDE_TABLE
        ],
        key=str,
    )

    # The daemon is running and reachable, and the per-user service was installed for the next login.
    version = _run([hippoctl, "--no-spawn", "--json", "version"], env, project)
    daemon = json.loads(version.stdout)["daemon"]
    assert daemon is not None and pid_alive(int(daemon["pid"]))
    unit = (root / "config" / "systemd" / "user" / "hippod.service").read_text()
    assert f"ExecStart={newcomer.venv / 'bin' / 'python'}" in unit
    calls = (root / "fakebin.log").read_text().splitlines()
    assert any(c.startswith("systemctl --user enable") and "hippod.service" in c for c in calls)


def _entries(settings: dict[str, Any]) -> list[tuple[str, str | None, str, int]]:
    return [
        (event, entry.get("matcher"), hook["command"], hook["timeout"])
        for event, entries in settings["hooks"].items()
        for entry in entries
        for hook in entry["hooks"]
    ]


def _command(settings: dict[str, Any], event: str, matcher: str | None = None) -> str:
    """The one command of the entry for `event` (and `matcher`)."""
    [command] = [c for e, m, c, _ in _entries(settings) if e == event and m == matcher]
    return command


class Host:
    """Runs an installed command as an agent host does: `/bin/sh -c`, a bare PATH, the event's JSON on
    stdin, in the project."""

    def __init__(self, env: dict[str, str], project: Path) -> None:
        self.env = {**env, "PATH": BARE_PATH}
        self.project = project

    def run(self, command: str, payload: dict[str, Any] | None) -> str:
        """The command's stdout; it must exit 0 with nothing on stderr."""
        stdin = "" if payload is None else json.dumps(payload)
        done = _run(["/bin/sh", "-c", command], self.env, self.project, input=stdin)
        assert (done.returncode, done.stderr) == (0, ""), (command, done.returncode, done.stderr)
        return done.stdout


def _wait_for(predicate: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def test_every_installed_command_starts_from_a_bare_path_and_does_its_job(newcomer: Newcomer) -> None:
    """Claude Code's seven entries, Codex's two, the OpenCode plugin's commands and the MCP server
    init names, each run with PATH=/usr/bin:/bin as its host runs it, with that host's input."""
    root, env, hippoctl = newcomer.root, newcomer.env, newcomer.hippoctl
    project = make_repo(root / "shop")
    for name, text in (("CLAUDE.md", USER_TEXT), ("AGENTS.md", USER_TEXT), ("opencode.json", "{}\n")):
        (project / name).write_text(text)
    (root / "home" / ".codex").mkdir()
    (root / "config" / "opencode").mkdir()
    done = _run([hippoctl, "init", "--no-learn"], env, project)
    assert done.returncode == 0, done.stderr
    # A pinned memory for the per-prompt hooks, and a contradiction every sleep then reports.
    for args in ([PINNED, "--pin"], [CONFLICT[0]], [CONFLICT[1]]):
        stored = _run([hippoctl, "remember", *args], env, project)
        assert stored.returncode == 0, stored.stderr
    settings = json.loads((root / "home" / ".claude" / "settings.json").read_text())
    codex_hooks = json.loads((root / "home" / ".codex" / "hooks.json").read_text())
    plugin = (root / "config" / "opencode" / "plugins" / "hippo.ts").read_text()
    db = project / ".hippo" / "hippo.db"
    host = Host(env, project)
    transcript = write_jsonl(
        root / "home" / ".claude" / "projects" / "-shop" / f"{SESSION}.jsonl",
        claude_records(
            ["Cut the release"], ["We decided to cut every release from the main branch with signed tags."]
        ),
    )
    claude = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project)}
    codex = {
        "session_id": "codex-session-1",
        "transcript_path": None,
        "cwd": str(project),
        "model": "gpt-5-codex",
    }

    # UserPromptSubmit, Claude Code's and Codex's: pinned and recent memories as additional context.
    for payload, command in (
        (
            {**claude, "hook_event_name": "UserPromptSubmit", "prompt": "How do I ship?"},
            _command(settings, "UserPromptSubmit"),
        ),
        (
            {**codex, "hook_event_name": "UserPromptSubmit", "prompt": "How do I ship?"},
            _command(codex_hooks, "UserPromptSubmit"),
        ),
    ):
        output = json.loads(host.run(command, payload))
        assert PINNED in output["hookSpecificOutput"]["additionalContext"]

    every = [c for _, _, c, _ in _entries(settings) + _entries(codex_hooks)]
    assert len(every) == 9 and all(c.startswith(f"{hippoctl} ") for c in every)

    # PostToolUseFailure: the failure becomes an error memory.
    failure = {
        **claude,
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "npm run build"},
        "tool_use_id": "toolu_01",
        "error": "Exit code 1\nError: Cannot find module 'left-pad'",
        "is_interrupt": False,
    }
    assert host.run(_command(settings, "PostToolUseFailure"), failure) == ""
    assert _rows(db, "SELECT count(*) FROM memories WHERE content LIKE '%left-pad%'") == [(1,)]

    # PreCompact asks for the memories section, PostCompact saves it, SessionStart (compact) restores.
    out = host.run(
        _command(settings, "PreCompact"), {**claude, "hook_event_name": "PreCompact", "trigger": "auto"}
    )
    assert "Memories for hippo" in out
    summary = "Released.\n\n## Memories for hippo\n\n- Release tags are signed with the team key\n"
    post = {**claude, "hook_event_name": "PostCompact", "trigger": "auto", "compact_summary": summary}
    assert host.run(_command(settings, "PostCompact"), post).startswith("Hippo saved 1 memor")
    assert _rows(db, "SELECT content FROM memories WHERE source = 'compaction'") == [
        ("Release tags are signed with the team key",)
    ]
    resume = {**claude, "hook_event_name": "SessionStart", "source": "compact"}
    assert host.run(_command(settings, "SessionStart", "compact"), resume).startswith(
        "## Restored after compaction"
    )
    codex_resume = {**codex, "hook_event_name": "SessionStart", "source": "compact"}
    host.run(
        _command(codex_hooks, "SessionStart", "compact"), codex_resume
    )  # nothing saved for Codex's session

    # SessionEnd queues the sleep and the capture; the next SessionStart shows the sleep's report.
    assert host.run(_command(settings, "SessionEnd"), {**claude, "hook_event_name": "SessionEnd"}) == ""
    assert _wait_for(lambda: _rows(db, "SELECT count(*) FROM memories WHERE source = 'capture'") == [(1,)])
    assert _wait_for(lambda: _rows(db, "SELECT count(*) FROM consolidation_runs") == [(1,)])
    assert _wait_for(lambda: _run([hippoctl, "last-sleep", "--keep"], env, project).stdout != "")
    start = {
        "session_id": "next",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    shown = host.run(_command(settings, "SessionStart"), start)
    assert shown.startswith(SLEEP_HEADER) and "1 open conflict" in shown

    # The OpenCode plugin's commands, with the payloads it sends: session-end sleeps, last-sleep shows it.
    commands = {words[1]: shlex.join(words) for words in _plugin_commands(plugin)}
    assert set(commands) == {"session-end", "last-sleep"}
    assert all(c.startswith(f"{shlex.quote(hippoctl)} ") for c in commands.values())
    ended = {"session_id": "oc-1", "cwd": str(project), "hook_event_name": "SessionEnd"}
    assert host.run(commands["session-end"], ended) == ""
    assert _wait_for(lambda: _rows(db, "SELECT count(*) FROM consolidation_runs") == [(2,)])
    assert _wait_for(lambda: _run([hippoctl, "last-sleep", "--keep"], env, project).stdout != "")
    opened = {
        "session_id": "oc-2",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    shown = host.run(commands["last-sleep"], opened)
    assert shown.startswith(SLEEP_HEADER) and "1 open conflict" in shown

    # The MCP server entry init printed, started as an MCP client starts it: initialize, then a tool call.
    [line] = [line for line in done.stdout.splitlines() if "For an MCP client:" in line]
    entry = json.loads(line.split("For an MCP client:", 1)[1])
    assert entry == {"command": hippoctl, "args": ["mcp"]}
    assert PINNED in asyncio.run(_mcp_recall(entry, host, "how are deploys done"))


def _plugin_commands(text: str) -> list[list[str]]:
    """The argument lists the plugin starts hippoctl with (its `const NAME = [...];` lines)."""
    return [json.loads(m) for m in re.findall(r"^const [A-Z_]+ = (\[.*\]);$", text, re.MULTILINE)]


async def _mcp_recall(entry: dict[str, Any], host: Host, query: str) -> str:
    """Start the server as an MCP client does (the entry's command and args, the client's bare PATH),
    initialise a session and call hippo_recall."""
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=host.env, cwd=host.project
    )
    with open(os.devnull, "w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            assert init.server_info.name == "hippod"
            result = await session.call_tool("hippo_recall", {"query": query})
    assert not result.is_error
    return "".join(getattr(item, "text", "") for item in result.content)
