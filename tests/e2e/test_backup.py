"""`hippoctl backup` and `hippoctl restore` against a real daemon and real files.

A backup taken while a client keeps writing is a consistent store holding every memory acknowledged
before it began; a restore brings the store back to it (a healthy store in one transaction, a
corrupt one by putting the file in place), and keeps the store as it was; bad input is one line.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from hippod.store.sqlite.migrations import SCHEMA_VERSION
from hippod.store.sqlite.prepare import APPLICATION_ID

if TYPE_CHECKING:
    from e2e.harness import Hippo

NO_EMBEDDINGS = '{"embeddings": {"enabled": false}, "autoSleep": {"enabled": false}}'

# A client that remembers note 0, 1, 2, ... one after another through the real entry point and prints
# each note's number once its `remember` has been acknowledged, until the stop file appears.
_WRITER = """
import contextlib, io, os, sys
from hippoctl.cli import main
stop = sys.argv[1]
n = 0
while not os.path.exists(stop):
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["remember", f"backup walrus note number {n} of the writer", "--global"])
    if code != 0:
        sys.exit(code)
    print(n, flush=True)
    n += 1
"""


def _rows(db: str, sql: str) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(Path(db).as_uri() + "?mode=ro", uri=True)) as conn:
        return list(conn.execute(sql).fetchall())


def _contents(db: str) -> set[str]:
    return {str(r[0]) for r in _rows(db, "SELECT content FROM memories")}


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def _writer(hippo: Hippo, stop: str) -> tuple[subprocess.Popen[str], Callable[[], list[int]]]:
    """The _WRITER client, started, and what reads the numbers it has had acknowledged so far."""
    acked = os.path.join(hippo.root, "acked")
    with open(acked, "w", encoding="utf-8") as out:
        writer = subprocess.Popen(
            [sys.executable, "-c", _WRITER, stop], env=hippo.env, cwd=hippo.root, stdout=out, text=True
        )

    def acknowledged() -> list[int]:
        return [int(line) for line in Path(acked).read_text().split()]

    return writer, acknowledged


def _project(hippo: Hippo) -> str:
    project = os.path.join(hippo.root, "proj")
    os.makedirs(os.path.join(project, ".hippo"))
    Path(project, ".hippo", "config.json").write_text(NO_EMBEDDINGS)
    hippo.ok("init", "--no-hooks", "--no-schedule", "--no-learn", cwd=project)
    return project


def test_a_backup_taken_while_a_client_writes_holds_every_acknowledged_memory(hippo: Hippo) -> None:
    os.makedirs(hippo.home)
    Path(hippo.home, "config.json").write_text(NO_EMBEDDINGS)
    hippo.start()
    stop = os.path.join(hippo.root, "stop-writing")
    writer, acknowledged = _writer(hippo, stop)
    try:
        assert hippo.wait_for(lambda: len(acknowledged()) >= 20, timeout=120), "the writer did not write"
        before = acknowledged()
        dest = os.path.join(hippo.root, "copy.db")
        reply = hippo.json("backup", dest)
        # The writer went on while the backup ran and after it: the backup was taken mid-stream.
        assert hippo.wait_for(lambda: len(acknowledged()) > len(before) + 5, timeout=120)
    finally:
        Path(stop).touch()
        writer.wait(timeout=60)
    assert writer.returncode == 0

    assert reply["path"] == dest and reply["store"] == hippo.home
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o600
    assert not os.path.exists(dest + "-wal")  # one file, no WAL to carry with it
    assert _rows(dest, "PRAGMA integrity_check") == [("ok",)]
    assert _rows(dest, "PRAGMA application_id") == [(APPLICATION_ID,)]
    assert _rows(dest, "PRAGMA journal_mode") == [("delete",)]
    numbers = {int(c.split()[4]) for c in _contents(dest)}
    assert set(before) <= numbers, sorted(set(before) - numbers)
    # One writer, one note at a time: a consistent copy holds notes 0..k and nothing past a gap.
    assert numbers == set(range(len(numbers)))
    assert reply["memories"] == len(numbers)
    assert _rows(dest, "SELECT count(*) FROM memories_fts") == [(len(numbers),)]


def test_a_restore_while_a_client_writes_loses_no_acknowledged_memory(hippo: Hippo) -> None:
    """Each acknowledged memory is in the store the restore kept aside or in the store after it: the
    copy aside and the replacement are one step, with no write committed between them."""
    os.makedirs(hippo.home)
    Path(hippo.home, "config.json").write_text(NO_EMBEDDINGS)
    hippo.start()
    hippo.ok("remember", "backup walrus seed", "--global")
    dest = os.path.join(hippo.root, "seed.db")
    hippo.ok("backup", dest, "--global")
    stop = os.path.join(hippo.root, "stop-writing")
    writer, acknowledged = _writer(hippo, stop)
    kept: list[str] = []
    try:
        for _ in range(3):
            count = len(acknowledged())
            assert hippo.wait_for(lambda n=count: len(acknowledged()) >= n + 5, timeout=120)
            kept.append(hippo.json("restore", dest, "--global")["kept"])
    finally:
        Path(stop).touch()
        writer.wait(timeout=60)
    assert writer.returncode == 0
    found: set[str] = set(_contents(hippo.db))
    for path in kept:
        found |= _contents(path)
    numbers = {int(c.split()[4]) for c in found if c.startswith("backup walrus note")}
    assert set(acknowledged()) <= numbers, sorted(set(acknowledged()) - numbers)


def test_restore_brings_a_project_store_back_and_keeps_the_store_as_it_was(hippo: Hippo) -> None:
    hippo.start()
    project = _project(hippo)
    store = os.path.join(project, ".hippo")
    kept_id = hippo.json("remember", "the walrus naps on the north ice floe", cwd=project)["id"]
    done = hippo.ok("backup", cwd=project)
    [backup] = Path(store, "backups").glob("hippo-*.db")
    assert done.stdout.strip().endswith(f"to {backup}"), done.stdout
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600

    later_id = hippo.json("remember", "the walrus moved to the south beach", cwd=project)["id"]
    hippo.ok("forget", kept_id, cwd=project)
    mirror = Path(store, "episodic", f"{later_id}.md")
    assert hippo.wait_for(mirror.exists, timeout=30)

    reply = hippo.json("restore", str(backup), cwd=project)
    assert reply["store"] == store and reply["memories"] == 1
    assert reply["schema"] == reply["from_schema"] == SCHEMA_VERSION
    results = hippo.json("recall", "walrus", cwd=project)["results"]
    assert [r["id"] for r in results] == [kept_id]
    # The mirrors follow the restored database: the later memory's file goes, the kept one's is back.
    assert hippo.wait_for(lambda: not mirror.exists(), timeout=30)
    assert hippo.wait_for(Path(store, "episodic", f"{kept_id}.md").exists, timeout=30)
    # The store as the restore found it is kept, a backup like any other.
    kept = reply["kept"]
    assert os.path.dirname(kept) == str(backup.parent) and os.path.basename(kept).startswith("hippo-before-")
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600
    assert _contents(kept) == {"the walrus moved to the south beach"}
    [entry] = hippo.json("audit", "list", "--op", "restore", cwd=project)["entries"]
    assert entry["metadata"] == {"source": str(backup), "from_schema": SCHEMA_VERSION}
    # The store goes on: it takes writes, and a restart opens it as restored.
    hippo.ok("remember", "the walrus came back north", cwd=project)
    hippo.stop()
    hippo.start()
    contents = sorted(r["content"] for r in hippo.json("recall", "walrus", cwd=project)["results"])
    assert contents == ["the walrus came back north", "the walrus naps on the north ice floe"]


def test_restore_puts_a_backup_in_place_of_a_corrupt_store(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("remember", "--global", "the global walrus swims under the ice")
    backup = hippo.json("backup", "--global")["path"]
    hippo.stop()
    with open(hippo.db, "r+b") as handle:  # the header and the schema's root page
        handle.write(b"\xa5" * 4096)
    hippo.start()
    assert hippo.ctl("recall", "--global", "walrus").returncode == 1  # set aside, named

    reply = hippo.json("restore", backup, "--global")
    assert reply["memories"] == 1
    assert Path(reply["kept"]).read_bytes()[:4096] == b"\xa5" * 4096  # the damaged file, kept as found
    contents = [r["content"] for r in hippo.json("recall", "--global", "walrus")["results"]]
    assert contents == ["the global walrus swims under the ice"]
    hippo.ok("remember", "--global", "a walrus fact after the restore")
    assert _rows(hippo.db, "PRAGMA integrity_check") == [("ok",)]


def test_restore_after_going_back_to_an_older_hippod(hippo: Hippo) -> None:
    """A store a newer hippod migrated cannot be opened by this one; restoring the backup taken
    before the upgrade puts that file in its place."""
    hippo.start()
    hippo.ok("remember", "--global", "the walrus before the upgrade")
    backup = hippo.json("backup", "--global")["path"]
    hippo.ok("remember", "--global", "the walrus after the upgrade")
    hippo.stop()
    with contextlib.closing(sqlite3.connect(hippo.db)) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")  # as a newer hippod left it
    hippo.start()
    done = hippo.ctl("recall", "--global", "walrus")
    assert done.returncode == 1 and "this hippod knows schema" in done.stderr, done.stderr

    reply = hippo.json("restore", backup, "--global")
    assert _rows(reply["kept"], "PRAGMA user_version") == [(SCHEMA_VERSION + 1,)]
    contents = [r["content"] for r in hippo.json("recall", "--global", "walrus")["results"]]
    assert contents == ["the walrus before the upgrade"]


def test_bad_destinations_and_files_are_one_line_errors_that_change_nothing(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("remember", "--global", "the global walrus swims under the ice")
    backups = os.path.join(hippo.home, "backups")

    missing = os.path.join(hippo.root, "no-such-folder", "copy.db")
    done = hippo.ctl("backup", missing)
    assert done.returncode == 1
    assert _one_line(done.stderr) == f"hippoctl: cannot write {missing}: no folder {os.path.dirname(missing)}"
    taken = Path(hippo.root, "taken.db")
    taken.write_text("mine")
    done = hippo.ctl("backup", str(taken))
    assert done.returncode == 1
    assert _one_line(done.stderr) == f"hippoctl: {taken} already exists; a backup never overwrites a file"
    assert taken.read_text() == "mine"

    foreign = os.path.join(hippo.root, "foreign.db")
    with contextlib.closing(sqlite3.connect(foreign)) as conn:
        conn.execute("CREATE TABLE t (x)")
    newer = hippo.json("backup", os.path.join(hippo.root, "newer.db"))["path"]
    with contextlib.closing(sqlite3.connect(newer)) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    cases = {
        str(taken): f"{taken} is not a hippod store (file is not a database)",
        foreign: f"{foreign} is not a hippod store (application id 0x0)",
        newer: f"{newer} has schema {SCHEMA_VERSION + 1}; this hippod knows schema {SCHEMA_VERSION} at most"
        " (try: upgrade hippod, then run: hippoctl daemon restart)",
        os.path.join(hippo.root, "gone.db"): f"{hippo.root}/gone.db: no such file",
    }
    for path, message in cases.items():
        done = hippo.ctl("restore", path, "--global")
        assert done.returncode == 1, (path, done.stderr)
        assert _one_line(done.stderr) == f"hippoctl: {message}", done.stderr
    assert not os.path.exists(backups)  # nothing kept: nothing was replaced
    assert _contents(hippo.db) == {"the global walrus swims under the ice"}
    assert not [n for n in os.listdir(hippo.home) if ".restore-" in n]  # no candidate left behind

    outside = os.path.join(hippo.root, "no-project")
    os.makedirs(outside)
    done = hippo.ctl("restore", newer, cwd=outside)
    assert done.returncode == 1
    assert _one_line(done.stderr) == (
        f"hippoctl: no project store above {outside}: restore --global replaces the global store, "
        "or hippoctl init makes a project store to restore into"
    )
    for args in (("restore",), ("backup", ""), ("restore", "")):
        done = hippo.ctl(*args)
        assert done.returncode == 2, (args, done.stderr)
        _one_line(done.stderr)
    assert "Traceback" not in Path(hippo.log).read_text()
    assert json.loads(hippo.ok("--json", "status", "--global").stdout)["stores"][0]["total"] == 1
