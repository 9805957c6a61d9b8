"""End-to-end: `hippoctl watch "<command>"` with real commands and the real daemon (ingest.md §6)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

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


def test_a_long_line_is_cut_and_stdout_serves_when_stderr_is_empty(hippo: Hippo) -> None:
    hippo.start()
    done = hippo.ctl("watch", "python3 -c \"print('x' * 600 + 'END'); raise SystemExit(7)\"")
    assert done.returncode == 7
    (row,) = _rows(hippo.db)
    assert row[
        "content"
    ] == "Command 'python3 -c \"print('x' * 600 + 'END'); raise SystemExit(7)\"' failed " + (
        "(exit 7): " + "x" * 199 + "…"
    )
    assert json.loads(row["tags"]) == ["error", "autolearn", "python3"]


# What an npm of the ELIFECYCLE era prints when `npm test` fails: the runner's error, then npm's own
# lines, ending with a log file named by the time of the run.
FAKE_NPM = r"""#!/bin/sh
stamp=${NPM_STAMP:-2026-12-02T02_31_11_123Z}
printf '\n> shop@1.0.0 test %s\n> node test/cart.test.js\n\nrunning 2 tests\n' "$PWD"
{
  echo "[2026-12-02T02:31:11.123Z] Error: cart total is wrong (expected 3, got 2)"
  echo "    at Object.<anonymous> ($PWD/test/cart.test.js:3:9)"
  echo "    at Module._compile (node:internal/modules/cjs/loader:1105:14)"
  echo "Error: could not read $HOME/.shoprc"
  echo "npm ERR! Test failed.  See above for more details."
  echo "npm ERR! code ELIFECYCLE"
  echo "npm ERR! errno 1"
  echo "npm ERR! shop@1.0.0 test: \`node test/cart.test.js\`"
  echo "npm ERR! Exit status 1"
  echo "npm ERR!"
  echo "npm ERR! Failed at the shop@1.0.0 test script."
  echo "npm ERR! This is probably not a problem with npm. There is likely additional logging output above."
  echo ""
  echo "npm ERR! A complete log of this run can be found in:"
  echo "npm ERR!     $HOME/.npm/_logs/$stamp-debug-0.log"
} >&2
exit 1
"""
NPM_STORED = (
    "Command 'npm test' failed (exit 1): [<time>] Error: cart total is wrong (expected 3, got 2) | "
    "Error: could not read ~/.shoprc | Test failed. See above for more details. | "
    "Failed at the shop@1.0.0 test script."
)


def _fake_npm(hippo: Hippo) -> dict[str, str]:
    bin_dir = Path(hippo.root, "npm-bin")
    bin_dir.mkdir()
    script = bin_dir / "npm"
    script.write_text(FAKE_NPM, encoding="utf-8")
    script.chmod(0o755)
    return dict(hippo.env, PATH=f"{bin_dir}{os.pathsep}{hippo.env['PATH']}")


def test_an_npm_failure_keeps_its_error_lines_normalised_and_is_never_pinned(hippo: Hippo) -> None:
    hippo.start()
    folder = os.path.join(hippo.root, "shop")
    os.makedirs(folder)
    hippo.ok("init", "--no-hooks", "--no-schedule", "--no-learn", cwd=folder)
    env = _fake_npm(hippo)
    done = hippo.ctl("watch", "npm test", cwd=folder, env=env)
    assert done.returncode == 1
    assert "npm ERR! A complete log of this run" in done.stderr  # the user still saw all of it
    db = os.path.join(folder, ".hippo", "hippo.db")
    (row,) = _rows(db)
    assert row["content"] == NPM_STORED
    assert row["pinned"] == 0
    # The next run logs to another timestamped file: the same failure, already known.
    again = hippo.ctl("watch", "npm test", cwd=folder, env=dict(env, NPM_STAMP="2026-12-03T09_00_00_001Z"))
    assert again.returncode == 1 and f"already known [{row['id']}]" in again.stderr
    assert len(_rows(db)) == 1
    # The per-prompt block lists it once, on one line, among the recent memories, not the pinned ones.
    block = hippo.ok("context", "--pinned-only", "--include-recent", "5", cwd=folder).stdout
    assert "### Pinned" not in block
    [line] = [line for line in block.splitlines() if "npm test" in line]
    assert line == f"- [observed] {NPM_STORED} [error, autolearn, npm]"
    assert block.index("### Recent") < block.index(line)


@pytest.mark.skipif(shutil.which("npm") is None or shutil.which("node") is None, reason="needs npm and node")
def test_a_real_npm_test_failure(hippo: Hippo) -> None:
    hippo.start()
    folder = Path(hippo.root, "shop")
    (folder / "test").mkdir(parents=True)
    (folder / "package.json").write_text(
        json.dumps({"name": "shop", "version": "1.0.0", "scripts": {"test": "node test/cart.test.js"}}),
        encoding="utf-8",
    )
    (folder / "test" / "cart.test.js").write_text(
        'const assert = require("assert");\nconsole.log("running 2 tests");\n'
        'assert.strictEqual(1 + 1, 3, "cart total is wrong");\n',
        encoding="utf-8",
    )
    hippo.ok("init", "--no-hooks", "--no-schedule", "--no-learn", cwd=str(folder))
    env = dict(
        hippo.env, npm_config_update_notifier="false", npm_config_fund="false", npm_config_audit="false"
    )
    done = hippo.ctl("watch", "npm test", cwd=str(folder), env=env, timeout=120)
    assert done.returncode != 0
    (row,) = _rows(str(folder / ".hippo" / "hippo.db"))
    content = row["content"]
    assert content.startswith("Command 'npm test' failed (exit ")
    assert "cart total is wrong" in content
    assert "\n" not in content and len(content) < 600
    assert str(folder) not in content and hippo.user_home not in content and "_logs" not in content


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
