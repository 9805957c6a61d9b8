"""A sleep's plan in a child process: row marks that agree across processes, and a child that fails
named in one line (store/sleep_process.py)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from hippod.errors import HippoError
from hippod.lifecycle.merge import new_semantic_id
from hippod.lifecycle.sleep_plan import Settings
from hippod.store.sleep_process import FAILED, plan_in_child
from hippod.store.sleep_snapshot import row_mark


def test_a_row_mark_is_the_same_in_every_process() -> None:
    # The child marks the rows it read and the daemon checks them: each process seeds hash() anew.
    row = ("mem_0a1b2c", "2026-03-01T09:00:00.000Z")
    code = f"from hippod.store.sleep_snapshot import row_mark; print(row_mark{row!r})"
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert int(out.stdout) == row_mark(*row)
    assert row_mark(*row) != row_mark(row[0], "2026-03-01T09:00:01.000Z")


def test_a_planner_that_fails_is_named_in_one_line(tmp_path: os.PathLike[str]) -> None:
    missing = os.path.join(os.fspath(tmp_path), "gone", "hippo.db")
    settings = Settings(now=datetime(2026, 3, 1, tzinfo=UTC))
    with pytest.raises(HippoError) as caught:
        asyncio.run(plan_in_child(missing, settings, new_semantic_id))
    assert caught.value.code == FAILED
    message = caught.value.message
    assert "\n" not in message
    assert message.startswith(f"sleep could not plan {missing}: its planner exited with 1")
    assert "unable to open database file" in message
