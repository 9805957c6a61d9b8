"""End-to-end: snapshot, session, handoff, current and wm through the real daemon (continuity.md §1-§5)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo

NOW = "2026-09-30T17:40:02.000Z"


def _project(hippo: Hippo, name: str = "proj") -> str:
    folder = os.path.join(hippo.root, name)
    os.makedirs(folder, exist_ok=True)
    hippo.ok("init", cwd=folder)
    return folder


def _ctl(hippo: Hippo, *args: str, cwd: str, **env: str) -> Any:
    return hippo.ctl(*args, cwd=cwd, env=hippo.daemon_env(**env))


def _rows(db: str, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute(sql))


# --- snapshots (§1) ------------------------------------------------------------------------------


def test_snapshot_save_show_clear_and_its_mirror(hippo: Hippo) -> None:
    hippo.start(fake_now=NOW)
    proj = _project(hippo)
    mirror = Path(proj, ".hippo", "buffer", "active-task.md")
    assert hippo.ok("snapshot", "show", cwd=proj).stdout == "No active task snapshot.\n"

    done = _ctl(
        hippo,
        "snapshot",
        "save",
        "--task",
        "Port the ranking module",
        "--summary",
        "BM25 and tie-break tests pass; budget fill still counts content only",
        "--next-step",
        "Count the rendered label lines in the budget",
        cwd=proj,
        HIPPO_SESSION_ID="s_0930a",
    )
    assert done.returncode == 0, done.stderr
    block = (
        "# Active task\n"
        "- Task: Port the ranking module\n"
        "- Summary: BM25 and tie-break tests pass; budget fill still counts content only\n"
        "- Next step: Count the rendered label lines in the budget\n"
        "- Session: s_0930a\n"
        "- Updated: 2026-09-30T17:40:02.000Z\n"
    )
    assert hippo.ok("snapshot", "show", cwd=proj).stdout == block
    assert mirror.read_text() == block
    data = hippo.json("snapshot", "show", cwd=proj)["snapshot"]
    assert (data["task"], data["status"], data["source"], data["session_id"]) == (
        "Port the ranking module",
        "active",
        "cli",
        "s_0930a",
    )

    # A second save supersedes the first; --session beats the environment.
    hippo.ok(
        "snapshot",
        "save",
        "--task",
        "Write docs",
        "--summary",
        "README half done",
        "--session",
        "s2",
        cwd=proj,
    )
    db = os.path.join(proj, ".hippo", "hippo.db")
    assert _rows(db, "SELECT task, status, session_id FROM task_snapshots ORDER BY id") == [
        ("Port the ranking module", "superseded", "s_0930a"),
        ("Write docs", "active", "s2"),
    ]
    assert "- Task: Write docs\n" in mirror.read_text() and "Next step" not in mirror.read_text()

    done = hippo.ok("snapshot", "clear", "--status", "done", cwd=proj)
    assert done.stdout == "Task snapshot #2 marked done\n"
    assert _rows(db, "SELECT status FROM task_snapshots WHERE id = 2") == [("done",)]
    assert hippo.ok("snapshot", "show", cwd=proj).stdout == "No active task snapshot.\n"
    assert hippo.json("snapshot", "show", cwd=proj) == {"snapshot": None, "status": "active"}
    assert mirror.read_text() == "No active task snapshot.\n"
    # The global store was never touched.
    assert _rows(hippo.db, "SELECT COUNT(*) FROM task_snapshots") == [(0,)]


def test_snapshot_usage_errors_write_nothing(hippo: Hippo) -> None:
    hippo.start()
    proj = _project(hippo)
    for args, message in [
        (("snapshot", "save", "--summary", "s"), "snapshot save needs --task"),
        (("snapshot", "save", "--task", "t", "--summary", "  "), "snapshot save needs --summary"),
        (("snapshot", "show", "--task", "t"), "--task does not go with `snapshot show`"),
        (("snapshot", "clear", "--summary", "s"), "--summary does not go with `snapshot clear`"),
    ]:
        done = hippo.ctl(*args, cwd=proj)
        assert (done.returncode, done.stderr) == (2, f"hippoctl: error: {message}\n"), args
    hippo.ok("snapshot", "save", "--task", "t", "--summary", "s", cwd=proj)
    done = hippo.ctl("snapshot", "clear", "--status", "active", cwd=proj)
    assert done.returncode == 2
    assert done.stderr.strip() == "hippoctl: --status must be one word other than active, not 'active'"
    assert hippo.json("snapshot", "show", cwd=proj)["snapshot"]["status"] == "active"


def test_snapshots_are_per_tenant(hippo: Hippo) -> None:
    hippo.start()
    proj = _project(hippo)
    _ctl(hippo, "snapshot", "save", "--task", "theirs", "--summary", "s", cwd=proj, HIPPO_TENANT="acme")
    assert hippo.ok("snapshot", "show", cwd=proj).stdout == "No active task snapshot.\n"
    done = _ctl(hippo, "snapshot", "show", cwd=proj, HIPPO_TENANT="acme")
    assert "- Task: theirs\n" in done.stdout


# --- session events (§2) -------------------------------------------------------------------------


def test_session_log_show_and_the_recent_session_mirror(hippo: Hippo) -> None:
    hippo.start(fake_now=NOW)
    proj = _project(hippo)
    for n in range(22):
        kind = "decision" if n == 21 else "progress"
        hippo.ok(
            "session", "log", "--id", "s1", "--content", f"step {n}\nsecond line", "--type", kind, cwd=proj
        )
    hippo.ok("session", "log", "--id", "s2", "--content", "other session", "--task", "t9", cwd=proj)

    mirror = Path(proj, ".hippo", "buffer", "recent-session.md").read_text()
    assert mirror == "# Recent session s2\n- [note] 2026-09-30T17:40:02.000Z other session\n"

    shown = hippo.ok("session", "show", "--id", "s1", cwd=proj).stdout.splitlines()
    assert shown == [f"- [progress] {NOW} step {n} second line" for n in range(14, 21)] + [
        f"- [decision] {NOW} step 21 second line"
    ]
    assert len(hippo.ok("session", "show", "--id", "s1", "--limit", "3", cwd=proj).stdout.splitlines()) == 3
    by_task = hippo.json("session", "show", "--task", "t9", cwd=proj)
    assert [(e["session_id"], e["content"]) for e in by_task["events"]] == [("s2", "other session")]
    # Neither --id nor --task: HIPPO_SESSION_ID, else the session of the newest event.
    assert hippo.ok("session", "show", cwd=proj).stdout == f"- [note] {NOW} other session\n"
    done = _ctl(hippo, "session", "show", "--limit", "1", cwd=proj, HIPPO_SESSION_ID="s1")
    assert done.stdout == f"- [decision] {NOW} step 21 second line\n"

    # Logging again to s1 rewrites the mirror with s1's 20 latest events, oldest first.
    hippo.ok("session", "log", "--id", "s1", "--content", "step 22", cwd=proj)
    lines = Path(proj, ".hippo", "buffer", "recent-session.md").read_text().splitlines()
    assert lines[0] == "# Recent session s1"
    assert lines[1:] == [f"- [progress] {NOW} step {n} second line" for n in range(3, 21)] + [
        f"- [decision] {NOW} step 21 second line",
        f"- [note] {NOW} step 22",
    ]
    assert hippo.ok("session", "show", "--id", "nobody", cwd=proj).stdout == "No session events.\n"


def test_session_log_needs_an_id_and_content(hippo: Hippo) -> None:
    hippo.start()
    proj = _project(hippo)
    done = hippo.ctl("session", "log", "--content", "x", cwd=proj)
    assert (done.returncode, done.stderr) == (
        2,
        "hippoctl: error: session log needs --id (or HIPPO_SESSION_ID)\n",
    )
    done = hippo.ctl("session", "show", "--id", "a", "--task", "b", cwd=proj)
    assert (done.returncode, done.stderr) == (
        2,
        "hippoctl: error: session show takes --id or --task, not both\n",
    )
    done = hippo.ctl("session", "show", "--limit", "0", cwd=proj)
    assert done.returncode == 2 and "--limit must be between 1 and 1000" in done.stderr
    # The session id from the environment is used when --id is left out.
    done = _ctl(hippo, "session", "log", "--content", "from env", cwd=proj, HIPPO_SESSION_ID="envsess")
    assert done.returncode == 0, done.stderr
    db = os.path.join(proj, ".hippo", "hippo.db")
    assert _rows(db, "SELECT session_id, event_type, source, content FROM session_events") == [
        ("envsess", "note", "cli", "from env")
    ]


def test_session_latest_and_current_show(hippo: Hippo) -> None:
    hippo.start(fake_now=NOW)
    proj = _project(hippo)
    assert hippo.ok("current", "show", cwd=proj).stdout == "No active task snapshot.\n"
    assert hippo.json("current", "show", cwd=proj)["task"] is None
    long = "x" * 300
    for n in range(10):
        hippo.ok("session", "log", "--id", "s1", "--content", f"e{n}", cwd=proj)
    hippo.ok("session", "log", "--id", "s1", "--content", long, "--type", "blocker", cwd=proj)
    hippo.ok("session", "log", "--id", "other", "--content", "not mine", cwd=proj)
    hippo.ok(
        "snapshot", "save", "--task", "Fix the flaky test", "--summary", "Found the race",
        "--next-step", "Add a lock", "--session", "s1", cwd=proj,
    )  # fmt: skip

    latest = hippo.ok("session", "latest", cwd=proj).stdout
    head, events = latest.split("\n\nRecent events:\n")
    assert head.startswith("# Active task\n- Task: Fix the flaky test\n")
    assert events.splitlines() == [f"- [note] {NOW} e{n}" for n in range(3, 10)] + [
        f"- [blocker] {NOW} {long}"
    ]
    data = hippo.json("session", "latest", cwd=proj)
    assert data["snapshot"]["task"] == "Fix the flaky test" and len(data["events"]) == 8

    current = hippo.ok("current", "show", cwd=proj).stdout
    assert current == (
        "Task: Fix the flaky test\nNext step: Add a lock\nRecent events:\n"
        "- [note] e6\n- [note] e7\n- [note] e8\n- [note] e9\n" + f"- [blocker] {'x' * 199}…\n"
    )
    cur = hippo.json("current", "show", cwd=proj)
    assert (cur["task"], cur["next_step"], cur["session_id"]) == ("Fix the flaky test", "Add a lock", "s1")
    assert [len(e["content"]) for e in cur["events"]] == [2, 2, 2, 2, 200]


# --- handoffs (§3) -------------------------------------------------------------------------------


def test_handoff_create_latest_show_and_resume(hippo: Hippo) -> None:
    hippo.start(fake_now="2026-10-01T18:22:05.000Z")
    proj = _project(hippo)
    sub = os.path.join(proj, "src", "deep")
    os.makedirs(sub)
    assert hippo.ok("handoff", "latest", cwd=proj).stdout == "No handoffs.\n"
    assert hippo.ok("session", "resume", cwd=proj).stdout == ""

    done = _ctl(
        hippo,
        "handoff", "create", "--summary", "Dormant table and restore verb done; sleep moves faded rows",
        "--next", "Add the retention sweep and its audit op", "--artifact", "hippod/sleep.py",
        cwd=sub, HIPPO_SESSION_ID="s_1001b",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Handoff #1 created (session s_1001b)\n"
    block = (
        "## Handoff #1 (session s_1001b, 2026-10-01 18:22 UTC)\n"
        "Summary: Dormant table and restore verb done; sleep moves faded rows\n"
        "Next: Add the retention sweep and its audit op\n"
        "Artifacts: hippod/sleep.py\n"
    )
    assert hippo.ok("handoff", "latest", cwd=proj).stdout == block
    assert hippo.ok("handoff", "show", "1", cwd=proj).stdout == block
    assert hippo.ok("session", "resume", cwd=proj).stdout == block
    data = hippo.json("handoff", "show", "1", cwd=proj)["handoff"]
    # No git repository: repo_root is the store's project folder.
    assert data["repo_root"] == os.path.realpath(proj)
    assert data["artifacts"] == ["hippod/sleep.py"]

    # Inside a git work tree, repo_root is its top level; no session anywhere: a fallback id.
    os.makedirs(os.path.join(proj, "src", ".git"))
    env = hippo.daemon_env(HIPPO_SESSION_ID=None)
    done = hippo.ctl(
        "handoff", "create", "--summary", "Second", "--task", "card:4", "--artifact", "a", "--artifact", "b",
        cwd=sub, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    latest = hippo.json("handoff", "latest", cwd=proj)["handoff"]
    assert latest["id"] == 2 and latest["repo_root"] == os.path.realpath(os.path.join(proj, "src"))
    assert re.fullmatch(r"fallback-\d{13}-\d+", latest["session_id"]), latest["session_id"]
    assert (latest["task_id"], latest["artifacts"], latest["next_action"]) == ("card:4", ["a", "b"], None)
    text = hippo.ok("handoff", "show", "2", cwd=proj).stdout
    assert text.splitlines()[1:] == ["Summary: Second", "Task: card:4", "Artifacts: a, b"]

    missing = hippo.ctl("handoff", "show", "99", cwd=proj)
    assert (missing.returncode, missing.stderr) == (1, "hippoctl: no handoff #99\n")
    # A number past SQLite's row ids is refused at the daemon's door as hippoctl refuses it.
    with hippo.raw() as conn:
        assert isinstance(conn.hello(), m.Welcome)
        conn.send(m.Request(id=5, cwd=proj, body=m.HandoffShow(id=2**64 - 1)))
        reply = conn.recv()
    assert isinstance(reply, m.Error) and (reply.code, reply.exit_code) == ("usage", 2), reply
    assert reply.message == f"the handoff number must be between 1 and {2**63 - 1}, not {2**64 - 1}"
    bad = hippo.ctl("handoff", "show", str(2**64), cwd=proj)
    assert bad.returncode == 2 and "must be a number" in bad.stderr
    bad = hippo.ctl("handoff", "show", "seven", cwd=proj)
    assert bad.returncode == 2 and "must be a number" in bad.stderr
    bad = hippo.ctl("handoff", "create", cwd=proj)
    assert (bad.returncode, bad.stderr) == (2, "hippoctl: error: handoff create needs --summary\n")


# --- working memory (§5) -------------------------------------------------------------------------


def _push(hippo: Hippo, cwd: str, content: str, importance: float, scope: str = "repo") -> None:
    hippo.ok("wm", "push", "--scope", scope, "--content", content, "--importance", str(importance), cwd=cwd)


def test_wm_eviction_example_from_the_spec(hippo: Hippo) -> None:
    hippo.start()
    proj = _project(hippo)
    _push(hippo, proj, "high", 0.9)
    _push(hippo, proj, "older half", 0.5)
    _push(hippo, proj, "newer half", 0.5)
    for n in range(17):
        _push(hippo, proj, f"filler {n}", 0.8)
    _push(hippo, proj, "elsewhere", 0.1, scope="other")
    assert len(hippo.json("wm", "read", "--scope", "repo", cwd=proj)["entries"]) == 20

    done = hippo.json("wm", "push", "--scope", "repo", "--content", "new", "--importance", "0.7", cwd=proj)
    assert done["evicted"] == 1
    contents = [e["content"] for e in hippo.json("wm", "read", "--scope", "repo", cwd=proj)["entries"]]
    assert "older half" not in contents and "newer half" in contents and "new" in contents
    assert len(contents) == 20
    assert contents[0] == "high" and contents[-1] == "newer half"
    # Eviction never crosses scopes: the low-importance entry elsewhere survives.
    assert hippo.ok("wm", "read", "--scope", "other", cwd=proj).stdout == "- [0.10] elsewhere\n"


def test_wm_read_order_clear_and_flush(hippo: Hippo) -> None:
    hippo.start()
    proj = _project(hippo)
    assert hippo.ok("wm", "read", cwd=proj).stdout == "No working memory in scope default.\n"
    hippo.ok("wm", "push", "--content", "first default", cwd=proj)
    hippo.ok("wm", "push", "--content", "second default", cwd=proj)
    hippo.ok("wm", "push", "--content", "urgent", "--importance", "1", "--session", "a", cwd=proj)
    assert hippo.ok("wm", "read", cwd=proj).stdout.splitlines() == [
        "- [1.00] urgent",
        "- [0.50] second default",
        "- [0.50] first default",
    ]
    flushed = hippo.ok("wm", "flush", "--session", "a", cwd=proj)
    assert flushed.stdout == "- [1.00] urgent\n"
    data = hippo.json("wm", "flush", cwd=proj)
    assert [e["content"] for e in data["entries"]] == ["second default", "first default"]
    assert data["removed"] == 2
    hippo.ok("wm", "push", "--content", "keep me", "--scope", "x", cwd=proj)
    cleared = hippo.ok("wm", "clear", "--scope", "x", cwd=proj).stdout
    assert cleared == "Cleared 1 entry from working memory scope x\n"
    db = os.path.join(proj, ".hippo", "hippo.db")
    assert _rows(db, "SELECT COUNT(*) FROM working_memory") == [(0,)]


def test_wm_refuses_importance_outside_zero_to_one(hippo: Hippo) -> None:
    hippo.start()
    proj = _project(hippo)
    for value in ("1.5", "-0.1", "nan"):
        done = hippo.ctl("wm", "push", "--content", "x", "--importance", value, cwd=proj)
        assert (done.returncode, done.stderr) == (
            2,
            "hippoctl: error: --importance must be between 0 and 1\n",
        )
    done = hippo.ctl("wm", "read", "--content", "x", cwd=proj)
    assert done.returncode == 2 and "--content does not go with `wm read`" in done.stderr
    assert _rows(os.path.join(proj, ".hippo", "hippo.db"), "SELECT COUNT(*) FROM working_memory") == [(0,)]


def test_continuity_goes_to_the_global_store_with_global(hippo: Hippo) -> None:
    hippo.start()
    proj = _project(hippo)
    hippo.ok("--global", "snapshot", "save", "--task", "g", "--summary", "s", cwd=proj)
    hippo.ok("wm", "push", "--global", "--content", "g", cwd=proj)
    assert Path(hippo.home, "buffer", "active-task.md").read_text().startswith("# Active task\n- Task: g\n")
    assert hippo.ok("snapshot", "show", cwd=proj).stdout == "No active task snapshot.\n"
    assert (
        json.loads(hippo.ok("--json", "wm", "read", "--global", cwd=proj).stdout)["entries"][0]["content"]
        == "g"
    )
