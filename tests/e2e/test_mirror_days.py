"""End-to-end: a project store set to `mirrors.layout: "day"` keeps one markdown file per layer and
day through the real daemon: remembers appended, a forget and a reject cut out, a daemon killed
inside the mirror window healed on the next start, and a switch back to one file per memory."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from e2e.sleep_support import project
from hippod.mirrors.mirror_days import PART
from hippod.mirrors.mirror_text import day_file, day_header, day_of, render, section
from hippod.model.memory import COLUMNS, Memory
from hippod.store.memory_codec import row_to_memory

if TYPE_CHECKING:
    from e2e.harness import Hippo

LAYERS = ("episodic", "semantic", "trace")


def _live(db_path: str) -> list[Memory]:
    columns = ", ".join(COLUMNS)
    with contextlib.closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as conn:
        return [row_to_memory(r) for r in conn.execute(f"SELECT {columns} FROM memories ORDER BY rowid")]


def _expected_days(db_path: str) -> dict[str, str]:
    """Every day file the database calls for (relative path -> text), worked out here from the rows."""
    by_key: dict[tuple[str, str], list[Memory]] = {}
    for memory in _live(db_path):
        by_key.setdefault((memory.layer, day_of(memory.created)), []).append(memory)
    texts: dict[str, str] = {}
    for (layer, day), rows in by_key.items():
        for start in range(0, len(rows), PART):
            part = start // PART + 1
            chunk = rows[start : start + PART]
            texts[day_file(layer, day, part)] = day_header(layer, day, part) + "".join(map(section, chunk))
    return texts


def _on_disk(root: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for layer in LAYERS:
        base = Path(root, layer)
        if base.is_dir():
            for path in base.rglob("*"):
                if path.is_file():
                    found[str(path.relative_to(root))] = path.read_text(encoding="utf-8")
    return found


def _remember(hippo: Hippo, folder: str, text: str) -> str:
    return str(hippo.json("remember", text, cwd=folder)["id"])


def test_day_files_through_the_daemon(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo, config={"autoSleep": {"enabled": False}, "mirrors": {"layout": "day"}})
    root = os.path.join(folder, ".hippo")
    ids = [
        _remember(hippo, folder, f"Wren note {n}: the hedge by gate {n * 3} holds a nest") for n in range(12)
    ]
    assert hippo.wait_for(lambda: _on_disk(root) == _expected_days(db), timeout=30), _on_disk(root)
    assert len(_on_disk(root)) == 1  # twelve memories of one day, one file
    hippo.ok("forget", ids[3], cwd=folder)
    hippo.ok("reject", ids[5], "--reason", "wrong", cwd=folder)
    assert hippo.wait_for(lambda: _on_disk(root) == _expected_days(db), timeout=30)
    text = next(iter(_on_disk(root).values()))
    assert ids[3] not in text and ids[5] not in text and f"## {ids[4]}\n" in text

    # Killed inside the mirror window: the next start heals from the database.
    late = _remember(hippo, folder, "Wren note late: the gate was painted green")
    hippo.ok("forget", ids[0], cwd=folder)
    hippo.kill()
    Path(root, "episodic", "stray.md").write_text("left over\n", encoding="utf-8")
    hippo.start()
    hippo.ok("status", cwd=folder)  # opens the store, which heals it
    assert hippo.wait_for(lambda: _on_disk(root) == _expected_days(db), timeout=60), _on_disk(root)
    text = next(iter(_on_disk(root).values()))
    assert f"## {late}\n" in text and ids[0] not in text
    (mine,) = [s for s in hippo.json("status", cwd=folder)["stores"] if s["kind"] == "project"]
    assert mine["mirrors"]["missing"] == 0, mine

    # Back to a file per memory: the next change heals the folders into that layout.
    Path(root, "config.json").write_text(json.dumps({"autoSleep": {"enabled": False}}), encoding="utf-8")
    _remember(hippo, folder, "Wren note last: the nest is empty now")

    def per_memory() -> bool:
        # The day files go before their emptied year and month folders, so both are waited for.
        wanted = {f"{m.layer}/{m.id}.md": render(m) for m in _live(db)}
        return _on_disk(root) == wanted and not any(Path(root, "episodic").glob("[0-9]*"))

    assert hippo.wait_for(per_memory, timeout=30), (
        sorted(_on_disk(root)),
        sorted(Path(root, "episodic").glob("*")),
    )
