"""End-to-end: doctor's Hook commands check runs every installed hook command as its host would
(`/bin/sh -c`, `PATH=/usr/bin:/bin`, empty stdin), fails each one that cannot start, and changes
nothing doing so (integrations.md §12)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.sleep_support import query
from e2e.transcripts import claude_records, write_jsonl
from hippod.integrations import claude, codex, opencode

if TYPE_CHECKING:
    from e2e.harness import Hippo

WAIT = 60.0
SESSION = "7a1d0c3e-doctor-hooks"
ENTRIES = [
    "Claude Code SessionEnd",
    "Claude Code SessionStart",
    "Claude Code SessionStart (compact)",
    "Claude Code UserPromptSubmit",
    "Claude Code PreCompact",
    "Claude Code PostCompact",
    "Claude Code PostToolUseFailure",
    "Codex UserPromptSubmit",
    "Codex SessionStart (compact)",
    "OpenCode plugin session-end",
    "OpenCode plugin last-sleep",
]


def agent_homes(hippo: Hippo) -> None:
    """Claude Code, Codex and OpenCode in use under the test's HOME."""
    os.makedirs(os.path.join(hippo.user_home, ".claude"))
    os.makedirs(os.path.join(hippo.user_home, ".codex"))
    os.makedirs(os.path.join(hippo.env["XDG_CONFIG_HOME"], "opencode"))


def hook_checks(hippo: Hippo, cwd: str | None = None) -> tuple[int, list[dict[str, Any]], str]:
    """doctor's exit code, its Hook commands checks (JSON), and its text output."""
    done = hippo.ctl("--json", "doctor", cwd=cwd, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    checks = [c for c in json.loads(done.stdout)["checks"] if c["name"] == "Hook commands"]
    text = hippo.ctl("doctor", cwd=cwd, timeout=120)
    assert text.returncode == done.returncode
    return done.returncode, checks, text.stdout


def test_bare_hippoctl_entries_fail_one_line_each_and_install_replaces_them(hippo: Hippo) -> None:
    agent_homes(hippo)
    hippo.start()
    # What earlier versions wrote: every command starts with a bare `hippoctl`.
    for install in (claude.install, codex.install):
        install("hippoctl", global_root=hippo.home, env=hippo.env)
    opencode.install("hippoctl", None, global_root=hippo.home, env=hippo.env)

    code, checks, text = hook_checks(hippo)
    assert code == 1
    assert [c["status"] for c in checks] == ["fail"] * len(ENTRIES)
    for entry, check in zip(ENTRIES, checks, strict=True):
        message = check["message"]
        assert message.startswith(f"{entry}: hippoctl "), message
        assert "cannot start with PATH=/usr/bin:/bin (exit 127: " in message and "not found" in message
        target = {"Claude": "claude-code", "Codex": "codex", "OpenCode": "opencode"}[entry.split()[0]]
        assert check["fix"] == f"hippoctl hook install {target}"
    lines = [line for line in text.splitlines() if "Hook commands" in line]
    assert len(lines) == len(ENTRIES)
    assert all(
        line.startswith("FAIL  Hook commands") and "fix: hippoctl hook install" in line for line in lines
    )

    for target in ("claude-code", "codex", "opencode"):
        hippo.ok("hook", "install", target)
    settings = json.loads(Path(claude.settings_path(hippo.env)).read_text())
    assert len([e for entries in settings["hooks"].values() for e in entries]) == 7  # replaced, not added
    _, checks, text = hook_checks(hippo)
    assert [(c["status"], c["message"]) for c in checks] == [
        ("ok", f"all {len(ENTRIES)} commands start with PATH=/usr/bin:/bin, as their hosts run them")
    ]
    assert sum("Hook commands" in line for line in text.splitlines()) == 1


def snapshot(*roots: str) -> dict[str, tuple[str, int]]:
    """sha256 and mtime of every file under the roots, but the daemon's log and what a SQLite reader
    may leave (the shared-memory index, an empty write-ahead log)."""
    found = {}
    for root in roots:
        for path in sorted(Path(root).rglob("*")):
            if not path.is_file() or "logs" in path.parts or path.name.endswith("-shm"):
                continue
            if path.name.endswith("-wal") and path.stat().st_size == 0:
                continue
            found[str(path)] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    return found


def test_running_every_installed_command_changes_nothing(hippo: Hippo, tmp_path: Path) -> None:
    agent_homes(hippo)
    hippo.start()
    folder = os.path.realpath(tmp_path / "proj")
    os.makedirs(folder)
    for name in ("CLAUDE.md", "AGENTS.md", "opencode.json"):
        Path(folder, name).write_text("{}\n" if name.endswith(".json") else "# proj\n")
    hippo.ok("init", "--no-schedule", "--no-learn", cwd=folder)
    hippo.ok("remember", "Deploys go through make release", "--pin", cwd=folder)
    # A contradiction, so the sleep below has a report to keep.
    hippo.ok("remember", "The feature flag is enabled for production users", cwd=folder)
    hippo.ok("remember", "The feature flag is disabled for production users", cwd=folder)
    # A kept sleep report, which an empty `last-sleep` would hand out and delete, and a session
    # whose end an empty `session-end` would consolidate again.
    transcript = write_jsonl(
        Path(hippo.user_home, ".claude", "projects", "-proj", f"{SESSION}.jsonl"),
        claude_records(["Ship the release"], ["We decided releases are cut from main only."]),
    )
    end = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": folder,
        "hook_event_name": "SessionEnd",
    }
    hippo.ok("session-end", input=json.dumps(end), cwd=folder)
    db = os.path.join(folder, ".hippo", "hippo.db")
    assert hippo.wait_for(lambda: query(db, "SELECT count(*) FROM consolidation_runs") == [(1,)], WAIT)
    assert hippo.wait_for(lambda: hippo.ok("last-sleep", "--keep", cwd=folder).stdout != "", WAIT)
    hippo.stop()
    hippo.start()  # every store checkpointed and closed, nothing left in flight
    hippo.ok("daemon", "status")
    before = snapshot(hippo.home, os.path.join(folder, ".hippo"))
    ledger = query(hippo.db, "SELECT count(*) FROM token_ledger")

    _, checks, _ = hook_checks(hippo, cwd=folder)
    assert [c["status"] for c in checks] == ["ok"], checks
    assert re.match(rf"all {len(ENTRIES)} commands start with PATH=/usr/bin:/bin", checks[0]["message"])

    assert snapshot(hippo.home, os.path.join(folder, ".hippo")) == before
    assert query(hippo.db, "SELECT count(*) FROM token_ledger") == ledger
    assert query(db, "SELECT count(*) FROM consolidation_runs") == [(1,)]
    assert not any(Path(hippo.home, "spool").rglob("*.json"))
    kept = hippo.ok("last-sleep", cwd=folder).stdout
    assert kept.startswith("=== Previous session hippo consolidation ===")  # still there for the next session
