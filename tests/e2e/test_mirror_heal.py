"""End-to-end: markdown mirrors heal. A daemon SIGKILLed right after many remembers and a reject
leaves mirrors unwritten and a rejected one behind; the next daemon brings the folders back in
line with the database as it opens the store, and `status` reports what it did. Mirrors are
never written through a planted symbolic link."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.sleep_support import project
from hippoctl.protocol import messages as m
from hippod.mirrors.mirror_text import render
from hippod.mirrors.mirrors import dormant_file
from hippod.model.memory import COLUMNS
from hippod.store.memory_codec import row_to_memory

if TYPE_CHECKING:
    from e2e.harness import Hippo

MEMORY_DIRS = ("episodic", "semantic", "trace", "buffer")


def _expected(db_path: str) -> dict[str, str]:
    """Every memory and dormant mirror the database calls for (relative path -> text), as hippod
    renders them."""
    columns = ", ".join(COLUMNS)
    with contextlib.closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as conn:
        live = [row_to_memory(r) for r in conn.execute(f"SELECT {columns} FROM memories")]
        faded = [row_to_memory(r) for r in conn.execute(f"SELECT {columns} FROM dormant_memories")]
    texts = {f"{mem.layer}/{mem.id}.md": render(mem) for mem in live}
    texts.update({dormant_file(mem.id): render(mem) for mem in faded})
    return texts


def _on_disk(root: str) -> dict[str, str]:
    """The memory and dormant mirror files (and leftover temporary files) under a store root; may
    be read while the daemon writes."""
    found: dict[str, str] = {}
    for folder in (*MEMORY_DIRS, "dormant"):
        path = Path(root, folder)
        if not path.is_dir():
            continue
        for entry in path.iterdir():
            if entry.name.startswith(("active-task", "recent-session")):
                continue
            try:
                found[f"{folder}/{entry.name}"] = "<link>" if entry.is_symlink() else entry.read_text()
            except FileNotFoundError:
                continue  # a temporary file the daemon renamed meanwhile
    return found


def _remember(hippo: Hippo, cwd: str, content: str) -> str:
    with hippo.raw() as conn:
        conn.hello()
        conn.send(m.Request(id=1, cwd=cwd, body=m.Remember(content=content)))
        reply = conn.recv()
    assert isinstance(reply, m.Result), reply
    return str(reply.data["id"])


def _project_status(hippo: Hippo, folder: str) -> dict[str, Any]:
    stores = hippo.json("status", cwd=folder)["stores"]
    (mine,) = [s for s in stores if s["kind"] == "project"]
    return dict(mine)


def _healed_status(hippo: Hippo, folder: str, healed_before: str | None = None) -> dict[str, Any]:
    """The project store's status once a heal newer than `healed_before` has run (the first
    status opens the store, which starts one)."""
    status: dict[str, Any] = {}

    def healed() -> bool:
        status.update(_project_status(hippo, folder))
        return status["mirrors"]["healed_at"] not in (None, healed_before)

    assert hippo.wait_for(healed, timeout=60, interval=0.2), status
    return status


def test_a_killed_daemons_mirrors_heal_on_the_next_start(hippo: Hippo) -> None:
    hippo.start()
    # Every memory written is counted: an automatic sleep past 50 would merge the near-copies.
    folder, db = project(hippo, config={"autoSleep": {"enabled": False}})
    root = os.path.join(folder, ".hippo")
    ids = [_remember(hippo, folder, f"Heron note {n}: the otter {n * 7} swims upstream") for n in range(120)]
    with hippo.raw() as conn:
        conn.hello()
        conn.send(m.Request(id=2, cwd=folder, body=m.Reject(id=ids[-1], reason="wrong")))
        reply = conn.recv()
        hippo.kill()  # at once: inside the mirror writer's one-second window
    assert isinstance(reply, m.Result), reply
    # Whatever the kill left, add the other kinds of damage a crash or a full disk leaves.
    Path(root, "episodic", f"{ids[0]}.md").unlink(missing_ok=True)
    Path(root, "episodic").mkdir(exist_ok=True)
    Path(root, "episodic", f"{ids[1]}.md").write_text("half a fi")
    Path(root, "episodic", "mem_000000000000.md").write_text("a forgotten memory\n")
    Path(root, "episodic", f".{ids[2]}.md.4f2a.tmp").write_text("left by a kill")
    expected = _expected(db)
    assert f"episodic/{ids[-1]}.md" not in expected and len(expected) == 119
    before = _on_disk(root)
    healed = sum(before.get(path) != text for path, text in expected.items())
    removed = len(set(before) - set(expected))
    assert healed >= 2 and removed >= 2

    hippo.start()
    status = _healed_status(hippo, folder)
    assert _on_disk(root) == expected
    mirrors = status["mirrors"]
    assert isinstance(mirrors, dict)
    assert (mirrors["missing"], mirrors["healed"], mirrors["removed"]) == (0, healed, removed), mirrors
    assert mirrors["healed_at"]
    text = hippo.ok("status", cwd=folder).stdout
    assert f"  mirrors: 0 missing; healed {healed}, removed {removed} since the store was opened" in text


def _one_mirror_lost(hippo: Hippo, *notes: str) -> tuple[str, str, str]:
    """A project with a memory per note, all mirrored, then the first one's mirror deleted:
    (folder, database, store root)."""
    hippo.start()
    folder, db = project(hippo)
    root = os.path.join(folder, ".hippo")
    ids = [_remember(hippo, folder, note) for note in notes]
    assert hippo.wait_for(lambda: len(_on_disk(root)) == len(notes), timeout=30)
    Path(root, "episodic", f"{ids[0]}.md").unlink()
    return folder, db, root


def test_status_counts_mirrors_missing_now(hippo: Hippo) -> None:
    folder, _, _ = _one_mirror_lost(
        hippo, "Kestrel notes: the wind turns west at noon", "Kestrel notes: the barn owl hunts at dusk"
    )
    mirrors = _project_status(hippo, folder)["mirrors"]
    assert isinstance(mirrors, dict)
    assert (mirrors["missing"], mirrors["healed"], mirrors["removed"]) == (1, 0, 0), mirrors


def test_a_sleep_heals_the_mirrors(hippo: Hippo) -> None:
    folder, db, root = _one_mirror_lost(
        hippo, "Plover notes: the tide is low at six", "Plover notes: the sandbar floods by eight"
    )
    Path(root, "semantic").mkdir(exist_ok=True)
    Path(root, "semantic", "sem_000000000000.md").write_text("stray\n")
    opened = _healed_status(hippo, folder)["mirrors"]["healed_at"]
    hippo.ok("sleep", "--no-share", cwd=folder)
    mirrors = _healed_status(hippo, folder, opened)["mirrors"]
    assert _on_disk(root) == _expected(db)
    assert mirrors["missing"] == 0
    assert mirrors["removed"] == 1, mirrors


def test_mirrors_are_never_written_through_a_planted_link(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    root = os.path.join(folder, ".hippo")
    victim_dir = Path(hippo.root, "victim")
    victim_dir.mkdir()
    victim = victim_dir / "precious.txt"
    victim.write_text("do not touch\n")
    # A link in place of a mirror file: replaced by the mirror, the file it points to untouched.
    kept = _remember(hippo, folder, "Curlew notes: the marsh path is dry")
    mirror = Path(root, "episodic", f"{kept}.md")
    assert hippo.wait_for(mirror.is_file, timeout=30)
    mirror.unlink()
    mirror.symlink_to(victim)
    hippo.stop()
    hippo.start()
    _healed_status(hippo, folder)
    assert victim.read_text() == "do not touch\n"
    assert not mirror.is_symlink() and mirror.read_text() == _expected(db)[f"episodic/{kept}.md"]
    # A link in place of a mirror folder: refused, nothing lands in the folder it points to.
    if Path(root, "semantic").is_dir():
        Path(root, "semantic").rmdir()
    Path(root, "semantic").symlink_to(victim_dir)
    hippo.ok("decide", "Curlews nest on the dunes", cwd=folder)
    hippo.stop()
    hippo.start()
    status = _healed_status(hippo, folder)
    assert sorted(p.name for p in victim_dir.iterdir()) == ["precious.txt"]
    assert victim.read_text() == "do not touch\n"
    mirrors = status["mirrors"]
    assert isinstance(mirrors, dict) and mirrors["missing"] == 1, mirrors
    semantic = os.path.join(root, "semantic")
    refusal = f"refusing to write mirrors through {semantic}: it is not a plain folder"
    assert refusal in Path(hippo.log).read_text()
