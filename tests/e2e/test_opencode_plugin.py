"""The OpenCode plugin run for real: the file `hook install opencode` writes is loaded under node the way
OpenCode loads it (every export called with the plugin input), OpenCode's events and hooks are played
at it, and the commands it starts are real processes: a recorder that logs what it was given, then
the real hippoctl against a real daemon (integrations.md §6)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from e2e.sleep_support import project, query
from hippoctl.protocol import messages as m
from hippod.integrations import opencode

if TYPE_CHECKING:
    from e2e.harness import Hippo

# Bun, which OpenCode runs plugins on, loads the .ts file itself; node runs its JavaScript as .mjs.
RUNTIMES = [
    pytest.param(
        (name, file_name),
        id=name,
        marks=pytest.mark.skipif(shutil.which(name) is None, reason=f"{name} is not installed"),
    )
    for name, file_name in (("node", "hippo.mjs"), ("bun", "hippo.ts"))
]
DRIVER = Path(__file__).with_name("opencode_driver.mjs")
WAIT = 60.0
HEADER = "=== Previous session hippo consolidation ==="
BASE = "You are OpenCode."
# What the recorder prints for last-sleep, as hippoctl prints a kept report.
RECORDER = """\
import json, os, sys
data = sys.stdin.read()
with open(os.environ["RECORD"], "a", encoding="utf-8") as out:
    out.write(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": json.loads(data)}) + "\\n")
if sys.argv[1] == "last-sleep":
    print("report for " + os.path.basename(os.getcwd()))
"""


def created(session: str, folder: str, parent: str | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {"id": session, "directory": folder, "title": "t", "version": "1"}
    if parent is not None:
        info["parentID"] = parent
    return {"event": {"type": "session.created", "properties": {"info": info}}}


def event(kind: str, **properties: Any) -> dict[str, Any]:
    return {"event": {"type": kind, "properties": properties}}


@pytest.fixture(params=RUNTIMES)
def runtime(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(the JavaScript runtime's path, the name the plugin file gets for it)."""
    name, file_name = request.param
    path = shutil.which(name)
    assert path is not None
    return path, file_name


def play(
    runtime: tuple[str, str],
    plugin_text: str,
    folder: str,
    steps: list[dict[str, Any]],
    env: dict[str, str],
    where: Path,
) -> list[list[str]]:
    """Load the plugin, as OpenCode in `folder` would, play the steps; the system prompts built."""
    where.mkdir(parents=True, exist_ok=True)
    plugin = where / runtime[1]
    plugin.write_text(plugin_text)
    scenario = where / "scenario.json"
    scenario.write_text(json.dumps(steps))
    done = subprocess.run(
        [runtime[0], str(DRIVER), str(plugin), folder, str(scenario)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done
    systems: list[list[str]] = json.loads(done.stdout)["systems"]
    return systems


@dataclass
class Recorded:
    """The plugin text with the recorder as hippoctl, node's environment, the record, the project."""

    text: str
    env: dict[str, str]
    record: Path
    folder: str


@pytest.fixture
def recorder(tmp_path: Path) -> Recorded:
    script = tmp_path / "fake_hippoctl.py"
    script.write_text(RECORDER)
    record = tmp_path / "record.jsonl"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "RECORD": str(record)}
    folder = tmp_path / "proj"
    folder.mkdir()
    text = opencode.plugin_source(shlex.join([sys.executable, str(script)]))
    return Recorded(text, env, record, str(folder))


def calls(record: Path) -> list[dict[str, Any]]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines()]


def test_turns_end_no_session_and_the_report_reaches_the_system_prompt(
    tmp_path: Path, runtime: tuple[str, str], recorder: Recorded
) -> None:
    folder = recorder.folder
    steps = [
        created("ses_a", folder),
        created("ses_sub", folder, parent="ses_a"),  # a subagent's session (the task tool)
        {"chat": "ses_a"},
        {"chat": "ses_sub"},
        *[event("session.status", sessionID="ses_a", status={"type": "busy"})] * 2,
        event("session.status", sessionID="ses_a", status={"type": "idle"}),
        event("session.idle", sessionID="ses_a"),
        {"system": "ses_a"},
        {"chat": "ses_a"},
        event("session.idle", sessionID="ses_a"),  # the end of the second turn
        {"system": "ses_a"},
        {"system": "ses_sub"},
        {"system": None},  # an OpenCode that names no session: the newest one's report
        {"settle": True},
    ]
    systems = play(runtime, recorder.text, folder, steps, recorder.env, tmp_path / "run")
    report = "report for proj"
    assert systems == [[BASE, report], [BASE, report], [BASE], [BASE, report]]
    [call] = calls(recorder.record)  # last-sleep for the new session only; no session end at all
    assert call["argv"] == ["last-sleep"] and call["cwd"] == folder
    assert call["stdin"] == {
        "session_id": "ses_a",
        "cwd": folder,
        "hook_event_name": "SessionStart",
        "source": "startup",
    }


def test_a_session_ends_once_when_deleted_or_when_opencode_closes(
    tmp_path: Path, runtime: tuple[str, str], recorder: Recorded
) -> None:
    folder = recorder.folder
    steps = [
        *[created(session, folder) for session in ("ses_a", "ses_b", "ses_quiet")],  # quiet: no turn
        created("ses_sub", folder, parent="ses_b"),
        *[{"chat": session} for session in ("ses_a", "ses_b", "ses_sub")],
        {"settle": True},
        event("session.deleted", info={"id": "ses_a", "directory": folder}),
        event("session.deleted", info={"id": "ses_a", "directory": folder}),
        {"settle": True},
        event("server.instance.disposed", directory=folder),
        {"dispose": True},
        event("session.deleted", info={"id": "ses_b", "directory": folder}),
    ]
    play(runtime, recorder.text, folder, steps, recorder.env, tmp_path / "run")
    ends = [c for c in calls(recorder.record) if c["argv"][0] == "session-end"]
    assert [c["argv"] for c in ends] == [["session-end", "--once"]] * 2
    assert [c["stdin"]["session_id"] for c in ends] == ["ses_a", "ses_b"]
    assert {c["cwd"] for c in ends} == {folder}
    assert all(c["stdin"]["hook_event_name"] == "SessionEnd" for c in ends)


def test_a_missing_hippoctl_disturbs_nothing(tmp_path: Path, runtime: tuple[str, str]) -> None:
    folder = str(tmp_path)
    text = opencode.plugin_source(str(tmp_path / "no" / "hippoctl"))
    steps = [created("ses_a", folder), {"chat": "ses_a"}, {"system": "ses_a"}, {"dispose": True}]
    assert play(runtime, text, folder, steps, {"PATH": "/usr/bin:/bin"}, tmp_path / "run") == [[BASE]]


def test_real_hippoctl_ends_the_session_and_shows_its_report_in_the_next(
    hippo: Hippo, runtime: tuple[str, str]
) -> None:
    hippo.start()
    folder, db = project(hippo)
    deploy = "Deploy to staging failed because the migration step was skipped"
    for text in (deploy, f"{deploy} again"):  # a sleep merges these: something to tell
        hippo.ok("remember", text, cwd=folder)
    text = opencode.plugin_source(shlex.join([sys.executable, "-m", "hippoctl"]))
    env = dict(hippo.env, PATH="/usr/bin:/bin")
    first = [created("ses_one", folder), {"chat": "ses_one"}, {"system": "ses_one"}, {"dispose": True}]
    assert play(runtime, text, folder, first, env, Path(hippo.root, "run1")) == [[BASE]]  # nothing kept yet
    assert hippo.wait_for(lambda: query(db, "SELECT count(*) FROM consolidation_runs") == [(1,)], WAIT)
    assert hippo.wait_for(lambda: hippo.ok("last-sleep", "--keep", cwd=folder).stdout != "", WAIT)
    second = [created("ses_two", folder), {"chat": "ses_two"}, {"system": "ses_two"}, {"system": "ses_two"}]
    systems = play(runtime, text, folder, second, env, Path(hippo.root, "run2"))
    assert len(systems) == 2 and systems[0] == systems[1]
    base, report = systems[0]
    assert base == BASE and report.startswith(HEADER) and report.endswith("=" * 40)
    assert f'"{deploy}" (2 memories)' in report


def end_once(hippo: Hippo, folder: str, session: str, *, once: bool = True) -> Any:
    body = m.SessionEnd(payload={"session_id": session, "cwd": folder}, once=once)
    with hippo.raw() as conn:
        assert isinstance(conn.hello(), m.Welcome)
        conn.send(m.Request(id=1, cwd=folder, body=body))
        reply = conn.recv()
    assert isinstance(reply, m.Result), reply
    return reply.data["queued"]


def test_session_end_once_runs_a_session_id_once_per_store(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    assert end_once(hippo, folder, "ses_x") is True
    assert end_once(hippo, folder, "ses_x") is False
    assert end_once(hippo, folder, "ses_y") is True
    assert end_once(hippo, folder, "ses_x", once=False) is True  # without --once, as Claude Code's hook
    # Each session's mark is recorded with the rest of its job, once that is done.
    marks = "SELECT request_key FROM spool_applied WHERE request_key LIKE 'session-end:%' ORDER BY 1"
    expected = [("session-end:ses_x",), ("session-end:ses_y",)]
    assert hippo.wait_for(lambda: query(db, marks) == expected, WAIT), query(db, marks)
    done = hippo.ctl("session-end", "--once", input=json.dumps({"session_id": "ses_x"}), cwd=folder)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
