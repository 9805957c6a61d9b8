"""Failures with a name: a corrupt store, a full disk, ids out of range, NUL bytes, long queries, bad JSON.

Each one answers with a one-line error naming the cause and the file, a documented exit code, and
leaves the store's files as they were (their bytes are hashed before and after).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo

NOT_A_DB = "is corrupt (file is not a database)"
NO_EMBEDDINGS = {"embeddings": {"enabled": False}}


def _project(hippo: Hippo, name: str = "proj", config: dict[str, object] | None = None) -> str:
    project = os.path.join(hippo.root, name)
    os.makedirs(os.path.join(project, ".hippo"), exist_ok=True)
    if config is not None:
        Path(project, ".hippo", "config.json").write_text(json.dumps(config))
    hippo.ok("init", cwd=project)
    return project


def _files_digest(db: str) -> dict[str, str]:
    """sha256 of the database and its WAL. The -shm index changes on every read and holds no data,
    and neither does an empty WAL, which SQLite makes when it opens the file."""
    out = {}
    for path in (db, db + "-wal"):
        if os.path.exists(path) and (path == db or os.path.getsize(path) > 0):
            out[os.path.basename(path)] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return out


def _corrupt(db: str) -> None:
    """Overwrite the first 4 KiB: the header and the first page, the schema's root."""
    with open(db, "r+b") as handle:
        handle.write(b"\xa5" * 4096)


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def _no_traceback(hippo: Hippo) -> None:
    log = Path(hippo.log).read_text()
    assert "Traceback" not in log, log[-3000:]


def _contents(hippo: Hippo, cwd: str, *extra: str) -> list[str]:
    return [r["content"] for r in hippo.json("recall", "walrus", *extra, cwd=cwd)["results"]]


# --- a corrupt store ---------------------------------------------------------------------------------


def _two_stores(hippo: Hippo) -> str:
    """A started daemon, a project store and the global store holding one walrus each; the project."""
    hippo.start()
    project = _project(hippo, config=NO_EMBEDDINGS)
    hippo.ok("remember", "the project walrus sleeps on the ice", cwd=project)
    hippo.ok("remember", "--global", "the global walrus swims under the ice", cwd=project)
    return project


def test_corrupt_global_store_is_set_aside(hippo: Hippo) -> None:
    project = _two_stores(hippo)
    hippo.stop()
    _corrupt(hippo.db)
    before = _files_digest(hippo.db)
    hippo.start()

    # A merged read goes on with the healthy store and names the one it skipped.
    done = hippo.ctl("recall", "walrus", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "the project walrus sleeps on the ice" in done.stdout
    assert "the global walrus" not in done.stdout
    line = _one_line(done.stderr)
    assert line == f"(skipped the global store: store {hippo.db} {NOT_A_DB}; see: hippoctl doctor)", line
    assert [s["kind"] for s in hippo.json("status", cwd=project)["stores"]] == ["project"]
    for args in (("context",), ("context", "walrus")):
        done = hippo.ctl(*args, cwd=project)
        assert done.returncode == 0, (args, done.stderr)
        assert "skipped the global store" in done.stderr, (args, done.stderr)
    assert hippo.ctl("context", "--pinned-only", cwd=project).returncode == 0

    # What only the corrupt store can answer fails with its name, exit 1.
    for args in (("remember", "--global", "a new global fact here"), ("recall", "--global", "walrus")):
        done = hippo.ctl(*args, cwd=project)
        assert done.returncode == 1, (args, done.stderr)
        line = _one_line(done.stderr)
        assert line == f"hippoctl: store {hippo.db} {NOT_A_DB} (try: hippoctl doctor)", line

    # doctor names the fix.
    done = hippo.ctl("doctor", cwd=project)
    assert done.returncode == 1
    [check] = [ln for ln in done.stdout.splitlines() if ln.startswith("FAIL  Global store")]
    assert f"store {hippo.db} {NOT_A_DB}" in check, check
    assert "fix: hippoctl restore <backup> --global (a copy `hippoctl backup` wrote); " in check, check
    assert f"without one, mv {hippo.db} {hippo.db}.corrupt: hippod starts an empty store there" in check, (
        check
    )

    # Reported once in the log, with no stack; the file is untouched.
    log = Path(hippo.log).read_text()
    assert log.count(f"store {hippo.db} {NOT_A_DB}; set aside") == 1, log
    _no_traceback(hippo)
    assert _files_digest(hippo.db) == before

    # The fix works without a restart: the file moved aside, a new global store opens.
    os.rename(hippo.db, hippo.db + ".corrupt")
    hippo.ok("remember", "--global", "the new global walrus fact", cwd=project)
    assert sorted(_contents(hippo, project)) == [
        "the new global walrus fact",
        "the project walrus sleeps on the ice",
    ]


def test_corrupt_project_store_is_set_aside(hippo: Hippo) -> None:
    project = _two_stores(hippo)
    hippo.stop()
    db = os.path.join(project, ".hippo", "hippo.db")
    _corrupt(db)
    before = _files_digest(db)
    hippo.start()

    done = hippo.ctl("--json", "recall", "walrus", cwd=project)
    assert done.returncode == 0, done.stderr
    assert [r["content"] for r in json.loads(done.stdout)["results"]] == [
        "the global walrus swims under the ice"
    ]
    assert (
        _one_line(done.stderr) == f"(skipped the project store: store {db} {NOT_A_DB}; see: hippoctl doctor)"
    )

    done = hippo.ctl("remember", "a project fact that cannot land", cwd=project)
    assert done.returncode == 1
    assert _one_line(done.stderr) == f"hippoctl: store {db} {NOT_A_DB} (try: hippoctl doctor)"

    done = hippo.ctl("doctor", cwd=project)
    [check] = [ln for ln in done.stdout.splitlines() if ln.startswith("FAIL  Project store")]
    assert (
        f"restore <backup> (a copy `hippoctl backup` wrote); without one, mv {db} {db}.corrupt, then run:"
        in check
    )
    _no_traceback(hippo)
    assert _files_digest(db) == before


def test_a_store_corrupted_while_open_is_set_aside(hippo: Hippo) -> None:
    """The damage comes while the daemon has the store open: the read that meets it answers from
    the healthy store, and so does every one after it."""
    hippo.start()
    project = _project(hippo, config=NO_EMBEDDINGS)
    os.makedirs(hippo.home, exist_ok=True)
    Path(hippo.home, "config.json").write_text(json.dumps(NO_EMBEDDINGS))
    hippo.ok("remember", "the project walrus sleeps on the ice", cwd=project)
    hippo.ok("remember", "--global", "the global walrus swims under the ice", cwd=project)
    assert len(_contents(hippo, project)) == 2  # both stores are open now
    _corrupt(hippo.db)
    # Readers trust their cache while the WAL index is unchanged: zero the index (in place, as it is
    # mapped) and empty the WAL, so the next read goes to the damaged file.
    shm = Path(hippo.db + "-shm")
    shm.write_bytes(b"\0" * shm.stat().st_size)
    os.truncate(hippo.db + "-wal", 0)
    before = _files_digest(hippo.db)
    skipped = f"(skipped the global store: store {hippo.db} {NOT_A_DB}; see: hippoctl doctor)"
    for _ in range(2):
        done = hippo.ctl("--json", "recall", "walrus", cwd=project)
        assert done.returncode == 0, done.stderr
        assert [r["content"] for r in json.loads(done.stdout)["results"]] == [
            "the project walrus sleeps on the ice"
        ]
        assert _one_line(done.stderr) == skipped
    done = hippo.ctl("remember", "--global", "a new global fact here", cwd=project)
    assert done.returncode == 1
    assert _one_line(done.stderr) == f"hippoctl: store {hippo.db} {NOT_A_DB} (try: hippoctl doctor)"
    _no_traceback(hippo)
    assert _files_digest(hippo.db) == before


# --- a full disk -------------------------------------------------------------------------------------


@contextlib.contextmanager
def _small_disk(where: str, size: str) -> Iterator[None]:
    """A tmpfs of `size` mounted at `where`, unmounted afterwards."""
    os.makedirs(where)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", where], check=True)
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", where], check=False)


def _fill(folder: str) -> str:
    """Write a file until the disk has no room left; returns its path."""
    path = os.path.join(folder, "filler")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as exc:
        assert exc.errno == 28, exc  # ENOSPC
    finally:
        os.close(fd)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:  # the last few blocks
        while True:
            os.write(fd, b"\0" * 512)
    except OSError:
        pass
    finally:
        os.close(fd)
    assert shutil.disk_usage(folder).free < 4096
    return path


def _retrieval_counts(db: str) -> list[int]:
    """Each memory's retrieval count, in the order of their text."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT retrieval_count FROM memories ORDER BY content")]
    finally:
        conn.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to mount a small tmpfs as a full disk")
def test_full_disk_refuses_writes_and_keeps_reads(hippo: Hippo) -> None:
    project = os.path.join(hippo.root, "proj")
    with _small_disk(project, "4m"):
        hippo.start()
        _project(hippo, config=NO_EMBEDDINGS)
        for n in range(3):
            hippo.ok("remember", f"the walrus number {n} sleeps on the ice", cwd=project)
        db = os.path.join(project, ".hippo", "hippo.db")
        filler = _fill(project)
        before = _files_digest(db)

        done = hippo.ctl("remember", "a fact about seals that has no room", cwd=project)
        assert done.returncode == 1, done.stderr
        line = _one_line(done.stderr)
        assert line.startswith(f"hippoctl: store {db}: the disk is full ("), line
        assert "nothing was written" in line and f"free space on the disk holding {project}/.hippo" in line

        # Reads answer; their strengthening is skipped and a warning says so.
        done = hippo.ctl("--json", "recall", "walrus", cwd=project)
        assert done.returncode == 0, done.stderr
        assert len(json.loads(done.stdout)["results"]) == 3
        line = _one_line(done.stderr)
        assert line.startswith(f"(recall counts not updated: store {db}: the disk is full ("), line
        assert hippo.ctl("context", cwd=project).returncode == 0
        assert hippo.ctl("status", cwd=project).returncode == 0
        _no_traceback(hippo)
        assert _files_digest(db) == before
        assert _retrieval_counts(db) == [0, 0, 0]

        # A daemon started on the full disk cannot open the store (SQLite needs room for the WAL's
        # index) and says so; the store is left as it was.
        assert hippo.stop() == 0
        _fill(project)
        before = _files_digest(db)
        hippo.start()
        done = hippo.ctl("recall", "walrus", cwd=project)
        assert done.returncode == 1, done.stderr
        line = _one_line(done.stderr)
        assert line.startswith(f"hippoctl: store {db}: the disk is full (disk I/O error; "), line
        _no_traceback(hippo)
        assert _files_digest(db) == before

        # With room again, writes and strengthening resume.
        os.unlink(filler)
        hippo.ok("remember", "a fact about seals that now has room", cwd=project)
        done = hippo.ctl("recall", "walrus", cwd=project)
        assert done.returncode == 0 and done.stderr.strip() == "", done.stderr
        hippo.stop()
        assert _retrieval_counts(db) == [0, 1, 1, 1]  # the seal fact first, then the walruses


# --- the door: ids out of range, NUL bytes ------------------------------------------------------------


def _one_memory_project(hippo: Hippo) -> tuple[str, str]:
    """A started daemon and a project store holding one memory; (the project, its hippo.db)."""
    hippo.start()
    project = _project(hippo, config=NO_EMBEDDINGS)
    hippo.ok("remember", "the walrus sleeps on the ice", cwd=project)
    return project, os.path.join(project, ".hippo", "hippo.db")


def _raw_reply(hippo: Hippo, request: m.Request) -> m.Message | None:
    with hippo.raw() as conn:
        assert isinstance(conn.hello(), m.Welcome)
        conn.send(request)
        return conn.recv()


TOO_BIG = str(2**63)


def test_row_ids_out_of_range_are_usage_errors(hippo: Hippo) -> None:
    project, db = _one_memory_project(hippo)
    before = _files_digest(db)
    cases = [
        (("resolve", TOO_BIG), "the conflict number must be between 1 and 9223372036854775807"),
        (("resolve", "0"), "the conflict number must be between 1 and"),
        (("decide", "get", TOO_BIG), "the decision number of decide get must be between 1 and"),
        (("decide", "close", TOO_BIG), "the decision number of decide close must be between 1 and"),
        (("handoff", "show", TOO_BIG), "the handoff number must be a number"),
    ]
    for args, words in cases:
        done = hippo.ctl(*args, cwd=project)
        assert done.returncode == 2, (args, done.stderr)
        assert words in _one_line(done.stderr), (args, done.stderr)
    # A client that skips those checks is refused at the daemon's door alike.
    bodies: list[tuple[m.Body, str]] = [
        (m.Resolve(n=2**63), f"the conflict number must be between 1 and 9223372036854775807, not {TOO_BIG}"),
        (m.DecideGet(n=2**63), "the decision number must be between 1 and"),
        (m.DecideClose(n=-(2**63)), "the decision number must be between 1 and"),
        (m.HandoffShow(id=2**64 - 1), "the handoff number must be between 1 and"),
        (m.AuditList(limit=2**63), f"limit is out of range: {TOO_BIG}"),
        (m.Dormant(limit=2**63), f"limit is out of range: {TOO_BIG}"),
    ]
    for body, words in bodies:
        reply = _raw_reply(hippo, m.Request(id=9, cwd=project, body=body))  # type: ignore[arg-type]
        assert isinstance(reply, m.Error), (body, reply)
        assert (reply.code, reply.exit_code) == ("usage", 2), (body, reply)
        assert words in reply.message, (body, reply)
    _no_traceback(hippo)
    assert _files_digest(db) == before


def test_nul_bytes_are_refused_at_the_door(hippo: Hippo) -> None:
    project, db = _one_memory_project(hippo)
    before = _files_digest(db)
    requests = [
        (m.Request(id=3, cwd=project + "\x00/x", body=m.Recall(query="walrus")), "the working directory"),
        (m.Request(id=3, cwd=project + "\x00", body=m.Remember(content="a walrus note")), "NUL byte"),
        (
            m.Request(id=3, cwd=project, env={"HIPPO_SESSION_ID": "s\x00"}, body=m.Recall(query="walrus")),
            "the environment variable 'HIPPO_SESSION_ID' holds a NUL byte",
        ),
    ]
    for request, words in requests:
        reply = _raw_reply(hippo, request)
        assert isinstance(reply, m.Error), reply
        assert (reply.id, reply.code, reply.exit_code) == (3, "usage", 2), reply
        assert words in reply.message and "\n" not in reply.message, reply
    with hippo.raw() as conn:
        reply = conn.hello(home=hippo.home + "\x00")
        assert isinstance(reply, m.Error) and reply.code == "home_mismatch", reply
    _no_traceback(hippo)
    assert _files_digest(db) == before
    assert _contents(hippo, project) == ["the walrus sleeps on the ice"]


# --- a long query, and JSON no text can hold ---------------------------------------------------------

DISK = "production outage: disk space exhausted on the database host"


@pytest.mark.embeddings
def test_query_of_thousands_of_words_with_embeddings(hippo: Hippo) -> None:
    hippo.start()
    project = _project(hippo)
    hippo.ok("remember", DISK, cwd=project)
    expected = "1 of 1 memory embedded"
    assert hippo.wait_for(lambda: expected in hippo.ok("embed", "--status", cwd=project).stdout, 30)
    for n in (600, 3000):
        words = [f"zzq{i}x" for i in range(n)]
        # No word matches: the candidates come from the substring fallback, then cosine only.
        done = hippo.ctl("--json", "recall", " ".join(words), cwd=project)
        assert done.returncode == 0, (n, done.stderr)
        data = hippo.json("recall", " ".join([*words, "outage"]), cwd=project)
        assert [r["content"] for r in data["results"]] == [DISK]
    _no_traceback(hippo)


def test_chatgpt_import_with_a_lone_surrogate(hippo: Hippo) -> None:
    project, db = _one_memory_project(hippo)
    before = _files_digest(db)
    message = {
        "author": {"role": "user"},
        "content": {"content_type": "text", "parts": ["We always deploy from main \ud800 on Fridays"]},
    }
    conversations = [{"title": "deploys", "mapping": {"a": {"message": message, "children": []}}}]
    text = json.dumps(conversations)  # writes the lone surrogate as the escape \ud800
    assert "\\ud800" in text
    offset = text.encode().index(b"\\ud800")
    path = os.path.join(hippo.root, "conversations.json")
    Path(path).write_text(text)
    done = hippo.ctl("import", "--chatgpt", path, cwd=project)
    assert done.returncode == 1, (done.stdout, done.stderr)
    line = _one_line(done.stderr)
    assert line == (
        f"hippoctl: cannot import {path}: not a valid --chatgpt file: not valid JSON: "
        f"a lone UTF-16 surrogate (\\ud800) at byte {offset} is not text"
    ), line
    _no_traceback(hippo)
    assert _files_digest(db) == before
