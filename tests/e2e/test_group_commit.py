"""Remembers from several connections at once share transactions: a reply means the memory is
committed, and a daemon killed in the middle of them leaves every memory whole (its row, its index
row and its audit row) or absent."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo

CLIENTS = 4


def _remember_until_gone(hippo: Hippo, client: int, acked: list[str], stop: threading.Event) -> None:
    """Remember one note per connection until the daemon is gone; the ids its replies named."""
    n = 0
    while not stop.is_set():
        n += 1
        try:
            with hippo.raw(timeout=10) as conn:
                if not isinstance(conn.hello(), m.Welcome):
                    return
                text = f"note {n} from client {client}: the build cache lives under target"
                body = m.Remember(content=text, tags=[f"c{client}"])
                conn.send(m.Request(id=1, cwd=hippo.root, body=body, global_store=True))
                reply = conn.recv()
        except OSError:
            return
        if not isinstance(reply, m.Result):
            return
        assert isinstance(reply.data, dict)
        acked.append(str(reply.data["id"]))


def _committed(db: str) -> tuple[set[str], list[tuple[str, str | None]], int]:
    """(memory ids, remember audit rows (op, target), FTS rows) as a fresh connection reads them."""
    conn = sqlite3.connect(db)
    try:
        ids = {str(r[0]) for r in conn.execute("SELECT id FROM memories")}
        audits = [(str(r[0]), r[1]) for r in conn.execute("SELECT op, target_id FROM audit_log")]
        fts = int(conn.execute("SELECT count(*) FROM memories_fts").fetchone()[0])
    finally:
        conn.close()
    return ids, audits, fts


def test_a_daemon_killed_among_concurrent_remembers_leaves_each_whole_or_absent(hippo: Hippo) -> None:
    os.makedirs(hippo.home, exist_ok=True)
    Path(hippo.home, "config.json").write_text('{"autoSleep": {"enabled": false}}')
    hippo.start()
    acked: list[list[str]] = [[] for _ in range(CLIENTS)]
    stop = threading.Event()
    threads = [
        threading.Thread(target=_remember_until_gone, args=(hippo, c, acked[c], stop)) for c in range(CLIENTS)
    ]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 30
        while sum(map(len, acked)) < 60 and time.monotonic() < deadline:
            time.sleep(0.02)
        # Mid-flight: the clients are still sending, so some requests are queued or being written.
        hippo.kill()
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    answered = {memory_id for ids in acked for memory_id in ids}
    assert len(answered) >= 60
    ids, audits, fts = _committed(hippo.db)
    # Every reply was sent after its commit.
    assert answered <= ids
    # Nothing half written: each memory has exactly one remember audit row and one index row.
    remembered = [target for op, target in audits if op == "remember"]
    assert sorted(remembered) == sorted(ids)
    assert fts == len(ids)


def test_concurrent_remembers_each_get_their_own_reply(hippo: Hippo) -> None:
    """Replies of requests written in one transaction go each to its own connection."""
    hippo.start()
    results: dict[int, str] = {}

    def one(client: int) -> None:
        with hippo.raw(timeout=10) as conn:
            assert isinstance(conn.hello(), m.Welcome)
            body = m.Remember(content=f"only client {client} wrote this note", tags=[])
            conn.send(m.Request(id=client, cwd=hippo.root, body=body, global_store=True))
            reply = conn.recv()
        assert isinstance(reply, m.Result) and reply.id == client
        assert isinstance(reply.data, dict)
        results[client] = str(reply.data["id"])

    threads = [threading.Thread(target=one, args=(c,)) for c in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(set(results.values())) == 8
    conn = sqlite3.connect(hippo.db)
    try:
        stored = dict(conn.execute("SELECT id, content FROM memories").fetchall())
    finally:
        conn.close()
    for client, memory_id in results.items():
        assert stored[memory_id] == f"only client {client} wrote this note"
