"""End-to-end: `hippoctl watch "<command>"` with real commands and the real daemon (ingest.md §6)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from e2e.harness import Hippo


def _rows(db: str) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute("SELECT * FROM memories ORDER BY rowid").fetchall()]


def test_failure_is_stored_and_the_exit_code_kept(hippo: Hippo) -> None:
    hippo.start()
    done = hippo.ctl("watch", "CI=1 DEBUG='a b' sh -c 'echo progress; echo boom: disk full >&2; exit 3'")
    assert done.returncode == 3
    assert done.stdout == "progress\n"  # the command's output reaches the user
    assert done.stderr.startswith("boom: disk full\n")
    (row,) = _rows(hippo.db)
    assert (
        row["content"]
        == "Command 'sh -c 'echo progress; echo boom: disk full >&2; exit 3'' failed (exit 3): "
        "boom: disk full"
    )
    assert json.loads(row["tags"]) == ["error", "autolearn", "sh"]
    assert (row["source"], row["confidence"], row["half_life_days"]) == ("autolearn", "observed", 730)
    assert f"remembered this failure [{row['id']}]" in done.stderr

    # The same failure again is already known; the command's code still comes back.
    again = hippo.ctl("watch", "sh -c 'echo boom: disk full >&2; exit 4'")
    assert again.returncode == 4
    assert f"already known [{row['id']}]" in again.stderr
    assert len(_rows(hippo.db)) == 1


def test_success_sends_nothing(hippo: Hippo) -> None:
    # No daemon runs and spawning is allowed: any request would start one, which opens the store.
    done = hippo.ctl("watch", "echo all good")
    assert (done.returncode, done.stdout, done.stderr) == (0, "all good\n", "")
    assert not os.path.exists(hippo.db)


def test_stdout_tail_when_stderr_is_empty_and_truncation(hippo: Hippo) -> None:
    hippo.start()
    done = hippo.ctl("watch", "python3 -c \"print('x' * 600 + 'END'); raise SystemExit(7)\"")
    assert done.returncode == 7
    (row,) = _rows(hippo.db)
    assert row["content"].endswith("x" * 497 + "END [truncated]")
    assert json.loads(row["tags"]) == ["error", "autolearn", "python3"]

    long_err = hippo.ctl("watch", "sh -c 'printf \"%0600d\" 0 >&2; echo tail-out; exit 1'")
    assert long_err.returncode == 1
    assert _rows(hippo.db)[-1]["content"].endswith("(exit 1): " + "0" * 500 + " [truncated]")


def test_secrets_are_scrubbed(hippo: Hippo) -> None:
    hippo.start()
    token = "ghp_" + "Z9y8" * 9
    done = hippo.ctl("watch", f"sh -c 'echo bad credentials for {token} >&2; exit 1'")
    assert done.returncode == 1
    (row,) = _rows(hippo.db)
    assert token not in row["content"] and "[REDACTED:github]" in row["content"]


def test_unreachable_daemon_keeps_the_exit_code(hippo: Hippo) -> None:
    env = dict(hippo.env, HIPPO_NO_SPAWN="1")
    done = hippo.ctl("watch", "sh -c 'echo boom >&2; exit 5'", env=env)
    assert done.returncode == 5
    assert done.stderr.splitlines() == [
        "boom",
        "hippoctl: warning: the failure was not recorded "
        f"(hippod is not running (no answer on {hippo.socket}))",
    ]
    ok = hippo.ctl("watch", "true", env=env)
    assert (ok.returncode, ok.stderr) == (0, "")


def test_command_not_found_and_signals(hippo: Hippo) -> None:
    hippo.start()
    missing = hippo.ctl("watch", "no-such-command-here --flag")
    assert missing.returncode == 127
    (row,) = _rows(hippo.db)
    assert row["content"].startswith("Command 'no-such-command-here --flag' failed (exit 127): ")
    assert "no-such-command-here" in json.loads(row["tags"])
    killed = subprocess.run(
        [sys.executable, "-m", "hippoctl", "watch", "kill -TERM $$"],
        env=hippo.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert killed.returncode == 128 + 15
    assert _rows(hippo.db)[-1]["content"] == "Command 'kill -TERM $$' failed (exit 143): (no output)"
