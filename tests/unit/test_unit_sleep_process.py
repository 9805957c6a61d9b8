"""A sleep's plan in a child process: row marks that agree across processes, and a child that fails
named in one line (store/sqlite/sleep_process.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import os
import pickle
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from e2e.sleep_support import make, plant

from hippod.base.errors import HippoError
from hippod.model.memory import COLUMNS, Memory
from hippod.model.merge import new_semantic_id
from hippod.model.sleep_plan import Settings
from hippod.store.sleep_rows import row_mark
from hippod.store.sqlite import sqlite_errors
from hippod.store.sqlite.sleep_process import FAILED, plan_in_child


def test_a_row_mark_is_the_same_in_every_process() -> None:
    # The child marks the rows it read and the daemon checks them: each process seeds hash() anew.
    row = ("mem_0a1b2c", "2026-03-01T09:00:00.000Z")
    code = f"from hippod.store.sqlite.sleep_snapshot import row_mark; print(row_mark{row!r})"
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert int(out.stdout) == row_mark(*row)
    assert row_mark(*row) != row_mark(row[0], "2026-03-01T09:00:01.000Z")


def test_a_planner_that_fails_is_named_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(HippoError) as caught:
        asyncio.run(plan_in_child(str(tmp_path / "hippo.db"), None, new_semantic_id))  # type: ignore[arg-type]
    assert caught.value.code == FAILED
    message = caught.value.message
    assert "\n" not in message
    assert message.startswith(f"sleep could not plan {tmp_path / 'hippo.db'}: its planner exited with 1 (")
    assert "AttributeError" in message


def test_a_corrupt_store_met_by_the_planner_is_named_corrupt(tmp_path: Path) -> None:
    # The daemon sets a corrupt store aside when a request meets its error: the planner's must reach
    # it as the SQLite error it is.
    junk = tmp_path / "hippo.db"
    junk.write_bytes(b"not a database, " * 512)
    settings = Settings(now=datetime(2026, 3, 1, tzinfo=UTC))
    with pytest.raises(sqlite3.DatabaseError) as caught:
        asyncio.run(plan_in_child(str(junk), settings, new_semantic_id))
    assert sqlite_errors.is_corrupt(caught.value)
    assert "file is not a database" in str(caught.value)


def test_a_memory_pickles_as_its_fields_in_column_order() -> None:
    assert tuple(f.name for f in dataclasses.fields(Memory)) == COLUMNS
    memory = make("the deploy needs the VPN", tags=["ops"], parents=["mem_1"], outcome_score=2)
    again = pickle.loads(pickle.dumps(memory))
    assert again == memory and again is not memory


def collector_state_id() -> str:
    """A new memory's id that says whether the process making it runs the cyclic collector."""
    return f"mem_gc{'on' if gc.isenabled() else 'off'}{new_semantic_id()[4:]}"


def test_the_planner_runs_without_the_cyclic_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two episodes close enough to merge: the child calls new_id for the semantic memory it makes,
    # and finds this module (new_id is pickled by reference to it) and the tests' own on its path.
    here = os.path.dirname(os.path.abspath(__file__))
    path = [here, os.path.dirname(here), os.environ.get("PYTHONPATH")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, path)))
    db = str(tmp_path / "hippo.db")
    text = "The staging deploy failed because the database migration step was skipped"
    plant(db, [make(text), make(text + " again")])
    settings = Settings(now=datetime(2026, 1, 2, tzinfo=UTC))
    planned, _, _ = asyncio.run(plan_in_child(db, settings, collector_state_id))
    assert gc.isenabled() and collector_state_id().startswith("mem_gcon")
    assert [m.semantic.id[:9] for m in planned.merges] == ["mem_gcoff"]
