"""A daemon that dies, freezes or is interrupted mid-request: the client exits within its bound."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from e2e.sleep_support import make, plant, project
from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo

# Every planted row has faded by then, so a sleep has real work.
FAR_FUTURE = "2031-01-01T00:00:00Z"


def has_socket(pid: int) -> bool:
    """True while the process holds a socket (a connected client, for hippoctl)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                return True
        except OSError:
            continue
    return False


def test_lost_daemon(hippo: Hippo) -> None:
    hippo.start()
    names = ["alder", "birch", "cedar", "maple", "rowan"]
    texts = [f"Lemming colony {name} migrates along the ridge" for name in names]
    for text in texts:
        hippo.ok("remember", text)
    daemon = hippo.proc
    assert daemon is not None

    os.kill(daemon.pid, signal.SIGSTOP)
    client = subprocess.Popen(
        [sys.executable, "-m", "hippoctl", "--no-spawn", "--timeout", "5", "recall", "lemming ridge"],
        env=hippo.env,
        cwd=hippo.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writer = subprocess.Popen(
        [sys.executable, "-m", "hippoctl", "--no-spawn", "--timeout", "5", "remember", "Lemming never lands"],
        env=hippo.env,
        cwd=hippo.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Let both clients connect (the kernel accepts on the backlog) and wait on the frozen daemon.
    for proc in (client, writer):
        assert hippo.wait_for(lambda p=proc: has_socket(p.pid), timeout=15), "client never connected"
    time.sleep(0.3)
    daemon.kill()
    daemon.wait(timeout=10)
    for proc in (client, writer):
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 3, (proc.returncode, out, err)
        assert out == ""
        assert len(err.strip().splitlines()) == 1, err
        assert err.startswith("hippoctl: ")
        assert "hippod" in err

    # The killed daemon left its socket and lock behind; a new one takes over.
    assert os.path.exists(hippo.socket)
    hippo.start()
    status = hippo.json("status")
    assert status["stores"][0]["total"] == len(texts)
    for name, text in zip(names, texts, strict=True):
        data = hippo.json("recall", f"lemming {name}", "--limit", "1")
        assert data["results"][0]["content"] == text
    assert hippo.json("recall", "never lands", "--min-results", "0")["results"] == []
    assert hippo.stop() == 0

    conn = sqlite3.connect(f"file:{hippo.db}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == len(texts)
    finally:
        conn.close()


@pytest.mark.embeddings
def test_a_memory_the_killed_daemon_never_embedded_ranks_on_its_words_until_embedded(hippo: Hippo) -> None:
    """The background pass that embeds a memory after its commit may not have run when the daemon
    dies. A recall does not wait on the model for such a memory: it ranks on its words alone and
    `--why` says so; the recall queues it for the background pass, after which it has its cosine."""
    pytest.importorskip("onnxruntime")
    hippo.start()
    names = ["alder", "birch", "cedar", "maple", "rowan"]
    texts = {name: f"Lemming colony {name} migrates along the ridge" for name in names}
    ids = {name: hippo.json("remember", text)["id"] for name, text in texts.items()}
    everything = f"{len(names)} of {len(names)} memories embedded"
    assert hippo.wait_for(lambda: everything in hippo.ok("embed", "--status").stdout, 30)
    hippo.kill()
    # What a daemon killed between the commit of the last memories and their embedding pass leaves.
    unembedded = {ids["maple"], ids["rowan"]}
    with sqlite3.connect(hippo.db) as conn:
        conn.executemany("DELETE FROM embeddings WHERE memory_id = ?", [(i,) for i in unembedded])
    conn.close()

    hippo.start()
    out = hippo.ok("recall", "lemming colony ridge", "--why", "--limit", "5").stdout
    blocks = {block.split()[0]: block for block in out.split("\n--- ")[1:]}
    assert set(blocks) == set(ids.values()), out
    for memory_id, block in blocks.items():
        if memory_id in unembedded:
            assert "; no vector yet: ranked by words alone" in block and "cosine:" not in block, block
        else:
            assert "cosine:" in block and "no vector yet" not in block, block
    # The recall queued them; the background pass embeds them and they rank as if never missed.
    assert hippo.wait_for(lambda: everything in hippo.ok("embed", "--status").stdout, 30)
    for name, text in texts.items():
        data = hippo.json("recall", f"lemming {name}", "--limit", "1", "--why")
        assert data["results"][0]["content"] == text, (name, data["results"])
        assert data["results"][0]["why"]["cosine"] is not None
        assert data["results"][0]["why"]["words_only"] is False


def test_lost_daemon_mid_session_with_unread_request(hippo: Hippo) -> None:
    """A client whose request was accepted but never answered exits 3 when the daemon dies."""
    hippo.start()
    daemon = hippo.proc
    assert daemon is not None
    with hippo.raw() as conn:
        assert isinstance(conn.hello(), m.Welcome)
        os.kill(daemon.pid, signal.SIGSTOP)
        conn.send(m.Request(id=1, cwd=hippo.root, body=m.Status()))
        daemon.kill()
        daemon.wait(timeout=10)
        assert conn.recv() is None
    done = hippo.ctl("--no-spawn", "status")
    assert done.returncode == 3
    assert "hippod is not running" in done.stderr


def test_frozen_daemon_makes_client_exit_3_then_recovers(hippo: Hippo) -> None:
    hippo.start()
    daemon = hippo.proc
    assert daemon is not None
    hippo.ok("remember", "Ibex herds cross the pass in spring")
    os.kill(daemon.pid, signal.SIGSTOP)
    try:
        done = hippo.ctl("--no-spawn", "--timeout", "5", "recall", "ibex pass", timeout=60)
    finally:
        os.kill(daemon.pid, signal.SIGCONT)
    assert done.returncode == 3, (done.returncode, done.stderr)
    assert done.stderr.strip() == "hippoctl: hippod stopped answering"
    assert done.stdout == ""
    data = hippo.json("recall", "ibex pass")
    assert [r["content"] for r in data["results"]] == ["Ibex herds cross the pass in spring"]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_exits_130(hippo: Hippo) -> None:
    """Ctrl-C while the client waits on the daemon exits 130 with no traceback.

    The daemon is frozen only once the request has visibly started (its first progress line), so the
    client is in its wait for the reply, which no load outlasts, and not in the 2 s handshake wait.
    """
    hippo.start()
    folder, db = project(hippo)
    hippo.stop()
    # Enough faded rows that the sleep is still at work when its first progress line arrives.
    plant(
        db, [make(f"Faded note {i}: the legacy cron job {i} rotated logs at midnight") for i in range(4000)]
    )
    hippo.start(fake_now=FAR_FUTURE)
    daemon = hippo.proc
    assert daemon is not None
    client = subprocess.Popen(
        [sys.executable, "-m", "hippoctl", "--no-spawn", "sleep", "--verbose", "--no-share"],
        cwd=folder,
        env=hippo.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As in a terminal: a run started in the background (`cmd &` in a script) ignores SIGINT,
        # and its children would inherit that.
        preexec_fn=_default_sigint,
    )
    assert client.stderr is not None
    try:
        first = client.stderr.readline()
        os.kill(daemon.pid, signal.SIGSTOP)
        client.send_signal(signal.SIGINT)
        _, err = client.communicate(timeout=30)
    finally:
        os.kill(daemon.pid, signal.SIGCONT)
    assert first.startswith("sleep: "), first
    assert client.returncode == 130, first + err
    assert "Traceback" not in err
    assert hippo.json("status", cwd=folder)["stores"]
