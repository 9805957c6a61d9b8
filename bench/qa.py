"""Question-answering benchmarks' plumbing: one real daemon, a fresh project store per conversation.

Every memory goes in through the daemon's Remember request and every question through its Recall
request, exactly as `hippoctl remember` and `hippoctl recall` send them; nothing touches the stores'
SQLite files, except that a store may begin as a copy of another (`new_store(seed=...)`).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harness import BenchError, Sandbox, call, make_sandbox, start_daemon, stop_daemon

from hippoctl.protocol import messages as m
from hippod.mirrors.mirror_heal import MEMORY_DIRS

# Large enough that the token budget never cuts the top-k, for the unbudgeted figures.
UNBUDGETED = 10_000_000


class QaDaemon:
    """A daemon in its own sandbox; `new_store` makes a fresh project store to fill and query.

    With `embed`, each store embeds its memories (the `hippod[embed]` extra) and recall is hybrid;
    without, each store's config turns embeddings off, so the figures are the no-model ones
    whether or not the extra is installed. Every recall is checked to return only memories the
    bench stored in that store.
    """

    def __init__(self, sb: Sandbox, embed: bool = False) -> None:
        self.sb = sb
        self.embed = embed
        self._stores = 0
        self._stored: dict[str, set[str]] = {}  # store folder -> the ids remembered there
        self.seeded: set[str] = set()  # stores that began as a copy of another (their ids are not checked)

    def call(self, cwd: str, body: m.Body) -> Any:
        """Send one request from `cwd`; returns the reply's data (an error reply raises BenchError)."""
        return self._call(cwd, body)

    def snapshot(self, cwd: str, target: str) -> None:
        """Copy the store of the project folder `cwd` to the folder `target`, for `new_store(seed=...)`."""
        os.makedirs(target, exist_ok=True)
        _copy_store(os.path.join(cwd, ".hippo"), target)

    def _call(self, cwd: str, body: m.Body) -> Any:
        reply = call(self.sb.sock, self.sb.home, cwd, body, timeout=120.0, global_store=False)
        if isinstance(reply, m.Error):
            raise BenchError(f"{type(body).__name__} failed: {reply.code}: {reply.message}")
        return reply.data

    def new_store(self, seed: str | None = None) -> str:
        """A fresh project folder with its own `.hippo/` store; returns the folder (the cwd to use).

        With `seed`, a store folder (its hippo.db and mirror folders) is copied in first: the
        bench's memories then sit among that store's, which recall may return (as distractors).
        """
        self._stores += 1
        cwd = os.path.join(self.sb.base, "stores", f"s{self._stores}")
        os.makedirs(os.path.join(cwd, ".hippo"))
        if seed is not None:
            _copy_store(seed, os.path.join(cwd, ".hippo"))
            self.seeded.add(cwd)
        with open(os.path.join(cwd, ".hippo", "config.json"), "w") as f:
            # No automatic sleep mid-haystack: the figures are those of retrieval over what was stored.
            json.dump(
                {"embeddings": {"enabled": "auto" if self.embed else False}, "autoSleep": {"enabled": False}},
                f,
            )
        data = self._call(cwd, m.Init())
        if (not data["created"] and seed is None) or data["kind"] != "project":
            raise BenchError(f"init did not create a project store in {cwd}: {data}")
        self._stored[cwd] = set()
        return cwd

    def ready(self, cwd: str) -> None:
        """Call once a store is filled: with `embed`, make sure every memory has its vector."""
        if not self.embed:
            return
        data = self._call(cwd, m.Embed())
        store = data["stores"][0]
        if store.get("unavailable") or store["embedded"] != store["total"]:
            raise BenchError(f"embedding the store in {cwd} failed: {store}")

    def remember(
        self, cwd: str, text: str, *, artifact_ref: str | None = None, tags: list[str] | None = None
    ) -> str:
        """Store one memory; returns its id."""
        data = self._call(cwd, m.Remember(content=text, artifact_ref=artifact_ref, tags=tags or []))
        self._stored[cwd].add(str(data["id"]))
        return str(data["id"])

    def recall(
        self,
        cwd: str,
        query: str,
        *,
        limit: int | None = None,
        budget: int = UNBUDGETED,
        min_results: int = 0,
    ) -> list[str]:
        """Memory ids in rank order, as `recall --limit N --budget B --min-results M` returns them."""
        body = m.Recall(query=query, limit=limit, budget=budget, min_results=min_results)
        ids = [str(item["id"]) for item in self._call(cwd, body)["results"]]
        foreign = [] if cwd in self.seeded else [i for i in ids if i not in self._stored[cwd]]
        if foreign:
            raise BenchError(
                f"recall in {cwd} returned {len(foreign)} memories the bench did not store there"
                f" (e.g. {foreign[0]}): the sandbox's stores are not the bench's alone"
            )
        return ids


def _copy_store(source: str, target: str) -> None:
    """A store's database (checkpointed: no -wal beside it) and its mirror folders, copied."""
    with sqlite3.connect(os.path.join(source, "hippo.db")) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy2(os.path.join(source, "hippo.db"), os.path.join(target, "hippo.db"))
    for name in MEMORY_DIRS:
        folder = os.path.join(source, name)
        if os.path.isdir(folder):
            shutil.copytree(folder, os.path.join(target, name))


@contextmanager
def qa_daemon(name: str, embed: bool = False) -> Iterator[QaDaemon]:
    """Start a daemon in a fresh sandbox (its HOME empty) for a benchmark run, and stop it afterwards."""
    sb = make_sandbox(0, parent="/tmp")
    proc: subprocess.Popen[bytes] | None = None
    try:
        proc = start_daemon(sb)
        yield QaDaemon(sb, embed)
    finally:
        if proc is not None:
            stop_daemon(proc)
        shutil.rmtree(sb.base, ignore_errors=True)
