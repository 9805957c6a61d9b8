"""What the daemon does around its requests, on Windows: hooks spooled while it is down and replayed
once, agents' notes imported by its folder watcher, files replaced while another process holds them,
and a client whose start-up loads nothing of the daemon's."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import WinHippo

from hippoctl.protocol import files, spool

REPO = Path(__file__).resolve().parents[2]


# Targets that differ in letters: errors that differ only in digits are one error's shape.
TARGETS = ("alpha", "bravo", "charlie")


def _payload(i: int) -> str:
    return json.dumps(
        {
            "session_id": "sess-win",
            "cwd": "C:\\work\\proj",
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": f"make {TARGETS[i]}"},
            "error": f"make: *** No rule to make target '{TARGETS[i]}'. Stop.",
            "is_interrupt": False,
        }
    )


def _pending(hippo: WinHippo) -> list[str]:
    return [n for k in spool.KINDS for n in spool.json_names(os.path.join(hippo.home, "spool", k))]


def _contents(hippo: WinHippo) -> list[str]:
    with sqlite3.connect(f"file:{os.path.join(hippo.home, 'hippo.db')}?mode=ro", uri=True) as db:
        return [r[0] for r in db.execute("SELECT content FROM memories ORDER BY content")]


def test_hooks_spool_while_the_daemon_is_down_and_each_replays_once(hippo: WinHippo) -> None:
    for i in range(3):
        done = hippo.ctl("capture-error", input=_payload(i), env={"HIPPO_NO_SPAWN": "1"})
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert len(_pending(hippo)) == 3
    hippo.ok("daemon", "start")
    assert hippo.wait_for(lambda: not _pending(hippo)), _pending(hippo)
    hippo.stop()
    hippo.ok("daemon", "start")
    assert hippo.status()["spool"] == {"pending": 0, "failed": 0}
    hippo.stop()
    stored = _contents(hippo)
    for target in TARGETS:
        assert sum(f"'{target}'" in c for c in stored) == 1, (target, stored)


def test_a_hook_whose_host_keeps_stdin_open_ends_within_its_budget(hippo: WinHippo) -> None:
    env = {**hippo.env, "HIPPO_NO_SPAWN": "1", "HIPPO_HOOK_TIMEOUT_MS": "500"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hippoctl", "capture-error"],
        cwd=hippo.work,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    proc.stdin.write(b'{"tool_name": "Bash", ')
    proc.stdin.flush()
    try:
        assert proc.wait(timeout=60) == 0  # stdin stays open: the budget ends the read
    finally:
        proc.kill()
        proc.stdin.close()
    [name] = _pending(hippo)
    kind = next(k for k in spool.KINDS if name in spool.json_names(os.path.join(hippo.home, "spool", k)))
    document = json.loads(Path(hippo.home, "spool", kind, name).read_text(encoding="utf-8"))
    assert document["stdin"] == '{"tool_name": "Bash", '


def test_an_agents_note_in_a_watched_folder_is_imported(hippo: WinHippo) -> None:
    codex = Path(hippo.profile, ".codex", "memories")
    codex.mkdir(parents=True)
    os.makedirs(hippo.home, exist_ok=True)
    Path(hippo.home, "daemon.json").write_text(json.dumps({"watch": {}}), encoding="utf-8")
    hippo.ok("daemon", "start")
    roots = hippo.status()["watch"]["roots"]
    assert any(Path(root).is_relative_to(codex.parent) for root in roots), roots
    note = codex / "memory_summary.md"
    temp = note.with_suffix(".tmp")
    temp.write_text(
        "# Memory summary\n## Preferences\n- Prefers ripgrep over grep for searches\n", encoding="utf-8"
    )
    temp.replace(note)

    def found() -> list[dict[str, object]]:
        return list(hippo.json("recall", "ripgrep searches")["results"])

    [memory] = hippo.wait_for(found)
    assert memory["tags"] == ["agent-memory", "agent:codex"]
    assert memory["content"] == "Prefers ripgrep over grep for searches"


def _hold(path: Path, seconds: float) -> threading.Thread:
    """Keep `path` open (without FILE_SHARE_DELETE, as Python and most editors open files) a while."""
    opened = threading.Event()

    def hold() -> None:
        with open(path, encoding="utf-8"):
            opened.set()
            time.sleep(seconds)

    thread = threading.Thread(target=hold)
    thread.start()
    assert opened.wait(10)
    return thread


def test_a_file_held_open_elsewhere_is_replaced_once_it_is_let_go(tmp_path: Path) -> None:
    target, temp = tmp_path / "MEMORY.md", tmp_path / ".MEMORY.md.tmp"
    target.write_text("old", encoding="utf-8")
    temp.write_text("new", encoding="utf-8")
    holder = _hold(target, 0.5)
    with pytest.raises(PermissionError):
        os.replace(temp, target)  # what Windows does without the retries
    files.replace(str(temp), str(target))
    holder.join()
    assert target.read_text(encoding="utf-8") == "new"


def test_a_file_held_open_past_the_patience_fails_and_keeps_both(tmp_path: Path) -> None:
    target, temp = tmp_path / "MEMORY.md", tmp_path / ".MEMORY.md.tmp"
    target.write_text("old", encoding="utf-8")
    temp.write_text("new", encoding="utf-8")
    holder = _hold(target, files.REPLACE_PATIENCE + 2.0)
    try:
        started = time.monotonic()
        with pytest.raises(PermissionError):
            files.replace(str(temp), str(target))
        assert time.monotonic() - started >= files.REPLACE_PATIENCE
    finally:
        holder.join()
    assert (target.read_text(encoding="utf-8"), temp.read_text(encoding="utf-8")) == ("old", "new")


def test_the_clients_start_up_loads_no_asyncio_sqlite_or_daemon(hippo: WinHippo) -> None:
    """The path every hook takes: parse the verb, connect over the pipe, check the server's SID."""
    hippo.ok("remember", "warm daemon for the import check")
    code = (
        "import sys, hippoctl.cli\n"
        "code = hippoctl.cli.main(['recall', 'warm daemon'])\n"
        "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=hippo.env,
        cwd=hippo.work,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = {name.split(".")[0] for name in done.stderr.split()}
    assert "hippoctl" in loaded and "_winapi" in loaded  # it did talk over the pipe
    assert (
        loaded & {"asyncio", "sqlite3", "_sqlite3", "hippod", "aiosqlite", "watchfiles", "platformdirs"}
        == set()
    )


def test_a_sleeps_spill_file_goes_into_the_store_and_is_removed(hippo: WinHippo) -> None:
    # A sleep's planner needs numpy, which does not load under Wine: its hand-over of the traits
    # it worked out (store/sqlite/sleep_traits.py) is run here on its own, with Windows' files.
    import asyncio

    from hippod.model.sleep_traits import traits_of
    from hippod.store.sqlite import sleep_traits
    from hippod.store.sqlite.db import Database

    hippo.ok("remember", "Run the linter before every commit in this repository")
    hippo.stop()
    db_path = os.path.join(hippo.home, "hippo.db")
    with sqlite3.connect(db_path) as db:
        row, content = db.execute("SELECT rowid, content FROM memories").fetchone()
    folder = os.path.join(hippo.home, sleep_traits.SPILL_DIR)
    os.makedirs(folder)
    Path(folder, "traits-1-left.bin").write_bytes(b"left by a daemon that died")
    path = sleep_traits.new_path(folder)
    assert os.listdir(folder) == [os.path.basename(path)]
    spill = sleep_traits.Spill(path)
    spill.write([sleep_traits.encode(row, content, traits_of(content))])
    spill.close()

    async def keep() -> int:
        store, _ = await Database.open(db_path)
        try:
            return await sleep_traits.keep(store, path)
        finally:
            await store.close()

    assert asyncio.run(keep()) == 1
    assert os.listdir(folder) == []
    with sqlite3.connect(db_path) as db:
        kept = db.execute(
            "SELECT key, words, distinct_words, sides, junk, warning FROM sleep_traits"
        ).fetchone()
    assert sleep_traits.decode(content, kept) == traits_of(content)
