"""capture's checks against the store run off the event loop (daemon.md §3: heavy work in a worker thread)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from hippod.handlers import capture as capture_handler
from hippod.ingest import capture, extract, transcript
from hippod.model.memory import Memory
from hippod.store.sqlite import db as dbmod
from hippod.store.sqlite import memories


async def test_store_keys_are_computed_in_a_worker_thread(
    database: dbmod.Database, make_memory: Callable[..., Memory], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with database.transaction() as conn:
        await memories.insert(conn, make_memory("Always run the linter before pushing!"))
        await memories.insert(conn, make_memory("Other tenant's note", tenant_id="other"))
    threads: list[threading.Thread] = []

    def recording_key(text: str) -> str:
        threads.append(threading.current_thread())
        return extract.store_key(text)

    monkeypatch.setattr(capture, "store_key", recording_key)
    keys = await capture.known_keys(database.reader, "default")
    assert keys == {"always run the linter before pushing"}
    assert threads and threading.main_thread() not in threads


async def test_the_newest_transcript_is_looked_for_in_a_worker_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[threading.Thread] = []

    def recording_lookup(home: str) -> str:
        threads.append(threading.current_thread())
        return str(tmp_path / "s.jsonl")

    monkeypatch.setattr(transcript, "newest_transcript", recording_lookup)
    assert await capture_handler._default_transcript() == str(tmp_path / "s.jsonl")
    assert threads and threading.main_thread() not in threads
