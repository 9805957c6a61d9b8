"""Many clients writing at once: every memory lands exactly once and nobody sees a locked database."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from e2e.harness import Hippo

WORKERS = 8
PER_WORKER = 10

# One client process that runs the real hippoctl entry point PER_WORKER times, each call on its own
# connection, and reports every exit code and stderr line as JSON.
_WORKER = """
import contextlib, io, json, sys
from hippoctl.cli import main
worker, count = sys.argv[1], int(sys.argv[2])
report = []
for n in range(count):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        text = f"Concurrent note w{worker}n{n} from writer {worker}"
        code = main(["remember", text, "--tag", f"w{worker}"])
    report.append({"code": code, "stderr": err.getvalue()})
print(json.dumps(report))
"""


def texts() -> set[str]:
    return {f"Concurrent note w{w}n{n} from writer {w}" for w in range(WORKERS) for n in range(PER_WORKER)}


def test_parallel_writers_each_memory_lands_once(hippo: Hippo) -> None:
    # Each memory is counted as written: an automatic sleep past 50 would merge the near-copies.
    os.makedirs(hippo.home, exist_ok=True)
    Path(hippo.home, "config.json").write_text('{"autoSleep": {"enabled": false}}')
    hippo.start()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(w), str(PER_WORKER)],
            env=hippo.env,
            cwd=hippo.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WORKERS)
    ]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "database is locked" not in err
        reports.append(json.loads(out))
    for report in reports:
        assert len(report) == PER_WORKER
        for call in report:
            assert call["code"] == 0, call
            assert "database is locked" not in call["stderr"]
            assert "internal" not in call["stderr"]

    status = hippo.json("status")
    assert status["stores"][0]["total"] == WORKERS * PER_WORKER
    assert status["stores"][0]["total_remembered"] == WORKERS * PER_WORKER
    # A note's unique token finds that very note.
    for w in (0, WORKERS - 1):
        data = hippo.json("recall", f"w{w}n3")
        assert data["results"][0]["content"] == f"Concurrent note w{w}n3 from writer {w}"
    assert hippo.stop() == 0

    conn = sqlite3.connect(f"file:{hippo.db}?mode=ro", uri=True)
    try:
        rows = [r[0] for r in conn.execute("SELECT content FROM memories")]
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()
    assert len(rows) == WORKERS * PER_WORKER
    assert set(rows) == texts()
    log = Path(hippo.log).read_text(encoding="utf-8")
    assert "database is locked" not in log
    assert "Traceback" not in log


def test_parallel_writers_across_two_stores(hippo: Hippo) -> None:
    """Writers to a project store and to the global store at the same time, racing its first opening."""
    hippo.start()
    project = f"{hippo.root}/proj"
    os.makedirs(project)
    # A fresh project store opens lazily: every writer below races to open it first.
    hippo.ok("init", cwd=project)
    hippo.stop()
    hippo.start()

    def writer(n: int, where: str, flag: list[str]) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "hippoctl", "remember", *flag, f"Crossfire {where} note {n} stored"],
            env=hippo.env,
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    procs = [writer(n, "local", []) for n in range(6)] + [writer(n, "global", ["--global"]) for n in range(6)]
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert out.startswith("Remembered [")
    status = hippo.json("status", cwd=project)
    totals = {s["kind"]: s["total"] for s in status["stores"]}
    assert totals == {"project": 6, "global": 6}


def test_parallel_recalls_count_every_retrieval(hippo: Hippo) -> None:
    """Concurrent recalls of one memory each strengthen it: no update is lost."""
    hippo.start()
    memory_id = hippo.json("remember", "Okapi stripes help calves follow their mothers")["id"]
    recalls = 12
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "hippoctl", "recall", "okapi stripes", "--global"],
            env=hippo.env,
            cwd=hippo.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(recalls)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    memory = hippo.json("inspect", memory_id)["memory"]
    assert memory["retrieval_count"] == recalls
    assert memory["half_life_days"] == 365 + 2 * recalls
