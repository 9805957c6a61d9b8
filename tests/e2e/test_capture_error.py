"""capture-error (ingest.md §7) and failures (continuity.md §8) against a real daemon, fed real
Claude Code PostToolUseFailure payloads on stdin."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from typing import TYPE_CHECKING, Any

from e2e.sleep_support import project, query

if TYPE_CHECKING:
    from e2e.harness import Hippo

GITHUB = "ghp_" + "b" * 36


def payload(**fields: Any) -> str:
    """A PostToolUseFailure payload as Claude Code sends it."""
    base: dict[str, Any] = {
        "session_id": "9f1c2d3e-sess-a",
        "transcript_path": "/home/u/.claude/projects/-home-u-proj/9f1c2d3e-sess-a.jsonl",
        "cwd": "/home/u/proj",
        "permission_mode": "default",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -x tests/test_api.py", "description": "Run the API tests"},
        "tool_use_id": "toolu_01ABC",
        "error": "Exit code 1\nE   ModuleNotFoundError: No module named 'requests' (/home/u/proj/api.py:12)",
        "is_interrupt": False,
    }
    base.update(fields)
    return json.dumps(base)


def capture(hippo: Hippo, text: str, *args: str, cwd: str | None = None) -> None:
    """Run the hook verb the way a host does; it must print nothing and exit 0."""
    done = hippo.ctl("capture-error", *args, input=text, cwd=cwd)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done


def failure_rows(db: str) -> list[tuple[Any, ...]]:
    return query(db, "SELECT session_id, project, tool, outcome, exact_hash, shape_hash FROM tool_failures")


def memories_of(db: str) -> list[tuple[Any, ...]]:
    return query(
        db, "SELECT content, tags, source, confidence, source_session_id, layer FROM memories ORDER BY rowid"
    )


def test_a_failure_is_stored_once_and_every_call_is_logged(hippo: Hippo) -> None:
    hippo.start()
    capture(hippo, payload())
    rows = memories_of(hippo.db)
    assert rows == [
        (
            "Bash failed: E ModuleNotFoundError: No module named 'requests' (api.py:12) "
            "(command: pytest -x tests/test_api.py)",
            '["error","auto-captured","tool:bash"]',
            "capture-error",
            "observed",
            "9f1c2d3e-sess-a",
            "episodic",
        )
    ]
    # The same failure again, with other line numbers and paths: the same shape, stored once.
    again = "Exit code 1\nE   ModuleNotFoundError: No module named 'requests' (/srv/b.py:7)"
    capture(hippo, payload(error=again))
    capture(hippo, payload(session_id="other-session"))
    assert len(memories_of(hippo.db)) == 1
    log = failure_rows(hippo.db)
    assert [r[3] for r in log] == ["stored", "duplicate", "duplicate"]
    assert log[0][5] == log[1][5] == log[2][5]  # one shape
    assert log[0][4] == log[2][4] != log[1][4]  # exact hashes differ with the text
    assert [r[0] for r in log] == ["9f1c2d3e-sess-a", "9f1c2d3e-sess-a", "other-session"]
    # Hashes only: the error text is nowhere in the log.
    dump = json.dumps(query(hippo.db, "SELECT * FROM tool_failures"))
    assert "requests" not in dump and "Exit code" not in dump
    # Recall finds the stored failure.
    results = hippo.json("recall", "ModuleNotFoundError requests")["results"]
    assert [r["content"][:30] for r in results] == ["Bash failed: E ModuleNotFoundE"]

    # A forgotten memory no longer counts as the earlier one: the failure is stored again.
    memory_id = results[0]["id"]
    hippo.ok("forget", memory_id)
    capture(hippo, payload())
    assert len(memories_of(hippo.db)) == 1
    assert [r[3] for r in failure_rows(hippo.db)][-1] == "stored"


# The error Claude Code reports when a Bash `npm test` fails: the exit code, the script's banner, Node's
# report of the failing test, then npm's own lines, ending with a log file named by the time of the run.
NPM_ERROR = """Exit code 1

> shop@1.0.0 test
> node test/cart.test.js

running 2 tests
node:fs:453
    return binding.readFileUtf8(path, stringToFlags(options.flag));
                   ^

Error: ENOENT: no such file or directory, open '{cwd}/test/fixtures/cart.json'
    at Object.readFileSync (node:fs:453:20)
    at Object.<anonymous> ({cwd}/test/cart.test.js:2:20)
    at Module._compile (node:internal/modules/cjs/loader:1256:14) {{
  errno: -2,
  code: 'ENOENT',
  syscall: 'open',
  path: '{cwd}/test/fixtures/cart.json'
}}

Node.js v20.11.1
npm ERR! code 1
npm ERR! path {cwd}
npm ERR! command failed
npm ERR! command sh -c node test/cart.test.js

npm ERR! A complete log of this run can be found in:
npm ERR!     {home}/.npm/_logs/{stamp}-debug-0.log
"""


def test_a_failed_npm_test_keeps_its_salient_lines_normalised(hippo: Hippo) -> None:
    hippo.start()
    cwd = os.path.join(hippo.user_home, "shop")
    os.makedirs(cwd)

    def npm_failure(stamp: str) -> str:
        error = NPM_ERROR.format(cwd=cwd, home=hippo.user_home, stamp=stamp)
        return payload(cwd=cwd, tool_input={"command": "npm test"}, error=error)

    capture(hippo, npm_failure("2026-12-02T02_31_11_123Z"))
    [(content, *_)] = memories_of(hippo.db)
    assert content == (
        "Bash failed: Error: ENOENT: no such file or directory, open 'test/fixtures/cart.json' "
        "(command: npm test)"
    )
    # The next run logs to another timestamped file: the same shape, so still one memory.
    capture(hippo, npm_failure("2026-12-03T09_00_00_001Z"))
    assert len(memories_of(hippo.db)) == 1
    assert [r[3] for r in failure_rows(hippo.db)] == ["stored", "duplicate"]


def test_noise_is_logged_but_not_stored(hippo: Hippo) -> None:
    hippo.start()
    cases = [
        (payload(is_interrupt=True), "interrupt"),
        (payload(error="Interrupted by user"), "interrupt"),
        (payload(error="The user doesn't want to proceed with this tool use."), "permission_declined"),
        (payload(error="Permission to use Bash has been denied. User denied"), "permission_declined"),
        (payload(tool_name="Grep", tool_input={"pattern": "TODO"}, error="No matches found"), "empty_search"),
        (payload(tool_name="Glob", tool_input={"pattern": "*.rs"}, error="No files found"), "empty_search"),
    ]
    for text, _ in cases:
        capture(hippo, text)
    assert memories_of(hippo.db) == []
    assert [r[3] for r in failure_rows(hippo.db)] == [outcome for _, outcome in cases]
    assert [r[2] for r in failure_rows(hippo.db)] == ["Bash"] * 4 + ["Grep", "Glob"]


def test_a_rejected_value_is_not_stored(hippo: Hippo) -> None:
    hippo.start()
    text = (
        "Bash failed: E ModuleNotFoundError: No module named 'requests' (api.py:12) "
        "(command: pytest -x tests/test_api.py)"
    )
    hippo.ok("reject", "--value", text, "--reason", "known and fixed")
    capture(hippo, payload())
    assert memories_of(hippo.db) == []
    assert [r[3] for r in failure_rows(hippo.db)] == ["rejected"]
    ops = [e["op"] for e in hippo.json("audit", "list")["entries"]]
    assert "reject_refusal" in ops


def test_secrets_are_scrubbed(hippo: Hippo) -> None:
    hippo.start()
    capture(
        hippo,
        payload(
            error=f"HTTP 401: bad credentials for {GITHUB}",
            tool_input={"command": f"gh api -H 'Authorization: token {GITHUB}' /user"},
        ),
    )
    [(content, *_)] = memories_of(hippo.db)
    assert GITHUB not in content
    assert content.startswith("Bash failed: HTTP 401: bad credentials for [REDACTED:github]")


def test_project_store_is_the_target(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    capture(hippo, payload(), cwd=folder)
    assert len(memories_of(db)) == 1
    assert [r[1] for r in failure_rows(db)] == ["proj"]
    assert failure_rows(hippo.db) == []  # nothing reached the global store
    # --global sends it to the global store instead.
    capture(hippo, payload(), "--global", cwd=folder)
    assert [r[3] for r in failure_rows(hippo.db)] == ["stored"]


def test_malformed_input_never_fails_the_host(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("init", "--global")
    bad = ["", "not json at all", "[1, 2, 3]", json.dumps({"tool_name": "Bash"}), json.dumps({"error": "x"})]
    for text in bad:
        capture(hippo, text)
    assert memories_of(hippo.db) == []
    assert failure_rows(hippo.db) == []
    # --strict reports the problem in one line with the usage exit code.
    done = hippo.ctl("capture-error", "--strict", input="not json at all")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == "hippoctl: capture-error: the input is not a JSON object\n"
    done = hippo.ctl("capture-error", "--strict", input=json.dumps({"tool_name": "Bash"}))
    assert (done.returncode, done.stderr) == (2, "hippoctl: capture-error: the input has no error text\n")


def test_failures_report(hippo: Hippo) -> None:
    hippo.start(fake_now="2026-10-01T12:00:00Z")
    boom = "Error: connect ECONNREFUSED 127.0.0.1:5432"
    capture(hippo, payload(session_id="s1", error=boom))
    capture(hippo, payload(session_id="s1", error=boom.replace("5432", "5433")))  # same shape, same session
    capture(hippo, payload(session_id="s2", error=boom))  # first seen in s1
    capture(hippo, payload(session_id="s3", error=boom))
    capture(hippo, payload(session_id="s3", tool_name="Edit", error="String to replace not found in file"))
    capture(hippo, payload(session_id="s3", tool_name="Grep", error="No matches found"))
    capture(hippo, payload(session_id="s4", tool_name="Edit", error="String to replace not found in file"))
    capture(hippo, payload(session_id="s4", is_interrupt=True))

    data = hippo.json("failures")
    assert data == {
        "days": 30,
        "by_outcome": {
            "stored": 2,
            "duplicate": 4,
            "interrupt": 1,
            "permission_declined": 0,
            "empty_search": 1,
            "rejected": 0,
        },
        "by_tool": {"Bash": 5, "Edit": 2, "Grep": 1},
        # Bash ECONNREFUSED in s2 and s3 (first in s1); Edit in s4 (first in s3); the interrupt's
        # shape (the default error) first appeared in s4 itself.
        "cross_session": {"failures": 3, "distinct": 2},
    }
    text = hippo.ok("failures").stdout
    assert text.startswith(f"Failed tool calls in the last 30 days: 8 ({hippo.home})\n")
    assert re.search(r"^  duplicate +4$", text, re.MULTILINE)
    assert re.search(r"^  Bash +5$", text, re.MULTILINE)
    assert "3 failures had first happened in another session (2 distinct errors)\n" in text
    assert text.rstrip().endswith("anyone who can guess an error's text can test it against its hash.")
    assert "ECONNREFUSED" not in text
    hippo.stop()

    # 40 days later the window of 30 is empty, yet the rows are kept (pruned only after 90 days).
    hippo.start(fake_now="2026-11-10T12:00:00Z")
    assert hippo.json("failures")["by_outcome"]["duplicate"] == 0
    assert hippo.json("failures", "--days", "60")["by_outcome"]["duplicate"] == 4
    huge = hippo.json("failures", "--days", "10000000")  # past the calendar's end: still every row
    assert (huge["days"], huge["by_outcome"]["duplicate"]) == (10_000_000, 4)
    done = hippo.ctl("failures", "--days", "0")
    assert (done.returncode, done.stderr) == (2, "hippoctl: error: --days must be 1 or more\n")
    hippo.stop()

    # 100 days later, the next write prunes every row older than 90 days in the same transaction.
    hippo.start(fake_now="2027-01-09T12:00:00Z")
    capture(hippo, payload(session_id="s9", tool_name="Read", error="File does not exist."))
    assert [(r[0], r[3]) for r in failure_rows(hippo.db)] == [("s9", "stored")]


def test_a_failed_write_leaves_nothing_behind(hippo: Hippo) -> None:
    """The memory, its shape, the log row and the request key commit together or not at all."""
    hippo.start()
    hippo.ok("init", "--global")
    hippo.stop()
    conn = sqlite3.connect(hippo.db)
    conn.execute("DROP TABLE tool_failures")  # the last write of the transaction will fail
    conn.commit()
    conn.close()
    hippo.start()
    done = hippo.ctl("capture-error", "--strict", input=payload())
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "hippoctl: internal error in hippod; see its log\n"
    assert memories_of(hippo.db) == []
    assert query(hippo.db, "SELECT count(*) FROM error_shapes") == [(0,)]
    assert query(hippo.db, "SELECT count(*) FROM spool_applied") == [(0,)]
    assert query(hippo.db, "SELECT count(*) FROM audit_log WHERE op = 'capture'") == [(0,)]
