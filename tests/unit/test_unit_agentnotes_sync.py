"""The note lifecycle on a real store (ingest.md §4): add, unchanged, replace, dormant, skips, dry run."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hippod.agentnotes import sources
from hippod.agentnotes.importer import import_project, sync_tool
from hippod.agentnotes.sync import Outcome, _context
from hippod.agentnotes.tools import encode_root
from hippod.daemon.app import new_state
from hippod.daemon.state import DaemonState
from hippod.jobs import watchers
from hippod.jobs.watchers import AgentWatcher
from hippod.lifecycle.new_memory import fresh_memory
from hippod.model.digest import content_digest
from hippod.model.memory import Memory
from hippod.store.records import Rejection
from hippod.store.sqlite import agent_links, memories, rejections
from hippod.store.sqlite import dormant as dormant_store
from hippod.store.stores import Store, StoreRegistry

NOTE = "---\nname: n\ntype: project\n---\n{}\n"


@pytest.fixture
async def daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[DaemonState]:
    home = tmp_path / "hippo"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"embeddings": {"enabled": False}}))
    monkeypatch.setenv("HIPPO_HOME", str(home))
    state = new_state(StoreRegistry(), str(tmp_path / "d.sock"), str(tmp_path / "d.log"), 1.0)
    try:
        yield state
    finally:
        await state.registry.close_all()


class Codex:
    """A Codex home whose memory_summary.md the test rewrites."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.file = home / "memories" / "memory_summary.md"
        self.file.parent.mkdir(parents=True)

    def write(self, *bullets: str) -> None:
        self.file.write_text("## Preferences\n" + "".join(f"- {b}\n" for b in bullets), encoding="utf-8")


async def _run(daemon: DaemonState, codex: Codex, *, dry_run: bool = False) -> tuple[Store, Outcome]:
    store = await daemon.registry.open(daemon.registry.global_root)
    _, outcome = await sync_tool(daemon, store, "codex", str(codex.home), project_root=None, dry_run=dry_run)
    return store, outcome


async def _contents(store: Store) -> list[str]:
    return sorted(m.content for m in await memories.live(store.db.reader, "default"))


async def _audit_ops(store: Store) -> list[str]:
    rows = await store.db.reader.execute_fetchall("SELECT op FROM audit_log ORDER BY id")
    return [str(r[0]) for r in rows]


async def test_new_unchanged_changed_and_deleted_notes(daemon: DaemonState, tmp_path: Path) -> None:
    codex = Codex(tmp_path / ".codex")
    codex.write("Prefers pnpm over npm for every package", "Runs the linters before each commit")
    store, first = await _run(daemon, codex)
    assert (first.added, first.replaced, first.dormant) == (2, 0, 0)
    assert await _contents(store) == [
        "Prefers pnpm over npm for every package",
        "Runs the linters before each commit",
    ]
    memory = (await memories.live(store.db.reader, "default"))[0]
    assert memory.tags == ["agent-memory", "agent:codex"]
    assert memory.source == "agent:codex:memories/memory_summary.md"
    assert (memory.confidence, memory.layer, memory.origin_project) == ("observed", "episodic", "")

    _, again = await _run(daemon, codex)
    assert (again.added, again.unchanged) == (0, 2)

    # An edited bullet is a new key (delete + add); a one-file note keeps its key and is replaced.
    codex.write("Prefers yarn classic for the monorepo work", "Runs the linters before each commit")
    _, edited = await _run(daemon, codex)
    assert (edited.added, edited.dormant, edited.unchanged) == (1, 1, 1)
    assert await _contents(store) == [
        "Prefers yarn classic for the monorepo work",
        "Runs the linters before each commit",
    ]
    gone = await dormant_store.newest(store.db.reader, "default")
    assert [(d.memory.content, d.reason) for d in gone] == [
        ("Prefers pnpm over npm for every package", "note_deleted")
    ]
    assert await _audit_ops(store) == ["agent_note_import"] * 3 + ["agent_note_dormant"]


async def test_a_changed_one_file_note_replaces_its_memory(daemon: DaemonState, tmp_path: Path) -> None:
    home = tmp_path / "ws"
    home.mkdir()
    note = home / "MEMORY.md"
    note.write_text("The user prefers short commit messages.")
    store = await daemon.registry.open(daemon.registry.global_root)
    _, first = await sync_tool(daemon, store, "openclaw", str(home), project_root=None)
    old = first.new_ids[0]
    note.write_text("The user prefers conventional commit messages with scopes.")
    _, second = await sync_tool(daemon, store, "openclaw", str(home), project_root=None)
    assert (second.added, second.replaced) == (0, 1)
    assert await memories.get(store.db.reader, "default", old) is None
    assert await dormant_store.count(store.db.reader, "default") == 0  # replaced, not dormant
    assert await _contents(store) == ["The user prefers conventional commit messages with scopes."]
    assert await _audit_ops(store) == ["agent_note_import", "agent_note_replace"]
    # The note's file disappears while its home is readable: the memory goes dormant.
    note.unlink()
    _, third = await sync_tool(daemon, store, "openclaw", str(home), project_root=None)
    assert third.dormant == 1 and await _contents(store) == []
    assert await agent_links.of_tool(store.db.reader, "openclaw") == {}


async def test_a_removed_note_folder_changes_nothing(daemon: DaemonState, tmp_path: Path) -> None:
    codex = Codex(tmp_path / ".codex")
    codex.write("Prefers pnpm over npm for every package")
    store, _ = await _run(daemon, codex)
    codex.file.unlink()
    codex.file.parent.rmdir()  # the home stays; the notes' folder is gone, so nothing is "deleted"
    _, outcome = await _run(daemon, codex)
    assert outcome.dormant == 0
    assert await _contents(store) == ["Prefers pnpm over npm for every package"]


async def test_a_missing_home_changes_nothing(daemon: DaemonState, tmp_path: Path) -> None:
    codex = Codex(tmp_path / ".codex")
    codex.write("Prefers pnpm over npm for every package")
    store, _ = await _run(daemon, codex)
    codex.file.unlink()
    codex.file.parent.rmdir()
    codex.home.rmdir()
    _, outcome = await _run(daemon, codex)
    assert outcome == Outcome()
    assert await _contents(store) == ["Prefers pnpm over npm for every package"]


async def test_skip_and_transform_rules(daemon: DaemonState, tmp_path: Path) -> None:
    store = await daemon.registry.open(daemon.registry.global_root)
    async with store.db.transaction() as conn:
        rejected = "This value was rejected by the user earlier"
        tombstone = Rejection(
            content_digest(rejected), "no", "cli", "2026-01-01T00:00:00Z", None, len(rejected)
        )
        await rejections.add(conn, "default", tombstone)
        await memories.insert(
            conn, _memory(store, daemon, "The staging cluster runs on three nodes in Frankfurt")
        )
    codex = Codex(tmp_path / ".codex")
    long_text = "Long note " + "word " * 400
    codex.write(
        "too short",
        "The deploy key is AKIAABCDEFGHIJKLMNOP for the bucket",
        rejected,
        "The staging cluster runs on three nodes in Frankfurt today",
        "Contact jane.doe@example.com about the release train",
        long_text,
    )
    _, outcome = await _run(daemon, codex)
    assert dict(outcome.skipped) == {"short": 1, "secret": 1, "rejected": 1, "duplicate": 1}
    assert outcome.added == 2
    contents = await _contents(store)
    assert "Contact j***@example.com about the release train" in contents
    cut = next(c for c in contents if c.startswith("Long note"))
    assert len(cut) == 1500 + len(" [truncated]") and cut.endswith(" [truncated]")
    links = await agent_links.of_tool(store.db.reader, "codex")
    # Only the duplicate is linked without a memory; the other skips leave no link.
    assert sorted((link.memory_id is None) for link in links.values()) == [False, False, True]


async def test_forget_suppresses_and_restore_detaches(daemon: DaemonState, tmp_path: Path) -> None:
    codex = Codex(tmp_path / ".codex")
    codex.write("Prefers pnpm over npm for every package")
    store, first = await _run(daemon, codex)
    memory_id = first.new_ids[0]
    async with store.db.transaction() as conn:
        await memories.delete(conn, "default", memory_id)
        assert await agent_links.suppress(conn, memory_id) == 1
    _, again = await _run(daemon, codex)
    assert again.added == 0 and await _contents(store) == []

    async with store.db.transaction() as conn:
        await agent_links.detach(conn, memory_id)
    assert all(
        link.memory_id is None for link in (await agent_links.of_tool(store.db.reader, "codex")).values()
    )


async def test_dry_run_writes_nothing_and_counts_the_same(daemon: DaemonState, tmp_path: Path) -> None:
    codex = Codex(tmp_path / ".codex")
    codex.write("Prefers pnpm over npm for every package", "tiny")
    store, dry = await _run(daemon, codex, dry_run=True)
    assert (dry.added, dict(dry.skipped)) == (1, {"short": 1})
    assert await _contents(store) == [] and await _audit_ops(store) == []
    assert await agent_links.of_tool(store.db.reader, "codex") == {}
    _, real = await _run(daemon, codex)
    assert (real.added, dict(real.skipped)) == (1, {"short": 1})


async def test_project_notes_without_a_store_go_global_with_the_project_name(
    daemon: DaemonState, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "webapp"
    project.mkdir()
    claude = tmp_path / ".claude"
    folder = claude / "projects" / encode_root(str(project)) / "memory"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text(NOTE.format("The webapp talks to the billing service over gRPC"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    env = {"HIPPO_AGENT_MEMORY_TOOLS": "claude-code"}
    report = await import_project(daemon, str(project), env)
    assert [(t.tool, t.added, t.folders) for t in report.tools] == [("claude-code", 1, [str(folder)])]
    store = await daemon.registry.open(daemon.registry.global_root)
    [memory] = await memories.live(store.db.reader, "default")
    assert memory.origin_project == "webapp"
    assert (await import_project(daemon, str(project), {"HIPPO_AGENT_MEMORY_TOOLS": "none"})).tools == []


def _memory(store: Store, daemon: DaemonState, text: str) -> Memory:
    return fresh_memory(_context(daemon, store, "default"), store, text, [])


def _spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Replace sources.<name> with a wrapper noting the thread of each call."""
    threads: list[int] = []
    real = getattr(sources, name)

    def spy(*args: object) -> object:
        threads.append(threading.get_ident())
        return real(*args)

    monkeypatch.setattr(sources, name, spy)
    return threads


async def test_notes_are_read_off_the_event_loop(
    daemon: DaemonState, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = Codex(tmp_path / ".codex")
    codex.write("Prefers pnpm over npm for every package")
    threads = _spy(monkeypatch, "read_locations")
    _, outcome = await _run(daemon, codex)
    assert outcome.added == 1
    assert threads and threading.get_ident() not in threads


async def test_the_watcher_maps_changes_to_jobs_off_the_event_loop(
    daemon: DaemonState, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = Codex(tmp_path / ".codex")
    codex.write("Prefers pnpm over npm for every package")
    monkeypatch.setenv("CODEX_HOME", str(codex.home))
    monkeypatch.setenv("HIPPO_AGENT_MEMORY_TOOLS", "codex")
    threads = _spy(monkeypatch, "user_locations")
    watcher = AgentWatcher(daemon, debounce_ms=50, rescan_seconds=60.0)  # not started: no watch, no jobs run
    await watcher._changed({str(codex.file), str(tmp_path / "elsewhere.md")})
    assert list(watcher.pending) == [(daemon.registry.global_root, "codex")]
    assert threads and threading.get_ident() not in threads


async def test_a_status_right_after_start_waits_for_the_first_roots(
    daemon: DaemonState, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = Codex(tmp_path / ".codex")
    monkeypatch.setenv("CODEX_HOME", str(codex.home))
    monkeypatch.setenv("HIPPO_AGENT_MEMORY_TOOLS", "codex")
    working_out = watchers._roots

    def slow_roots(tools: dict[str, str], projects: list[str]) -> tuple[list[str], list[str]]:
        time.sleep(0.3)  # a loaded machine: the first working-out lands after the first status request
        return working_out(tools, projects)

    monkeypatch.setattr(watchers, "_roots", slow_roots)
    watcher = AgentWatcher(daemon, debounce_ms=50, rescan_seconds=60.0)
    watcher.start()
    try:
        status = await watcher.status()
    finally:
        await watcher.stop()
    assert status["roots"] == [str(codex.home / "memories")]
