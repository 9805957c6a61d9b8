"""End-to-end: a rejected or forgotten text leaves the mirror folders before the verb answers, so a
daemon SIGKILLed right after the reply leaves no copy of it on disk; and a daemon's start heals the
mirrors of the registered stores without waiting for a request or a sleep."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from e2e.sleep_support import project
from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo

REJECTED = "Osprey notes: the north weir gate code is 4471"
FORGOTTEN = "Osprey notes: the boathouse key hangs behind the tide chart"
KEPT = "Osprey notes: the ferry timetable changes in April"


def _holding(root: str, text: str) -> list[str]:
    """The files under a store root (its database and journal aside) whose bytes hold the text."""
    needle = text.encode("utf-8")
    found = []
    for path in Path(root).rglob("*"):
        if path.is_file() and not path.name.startswith("hippo.db") and needle in path.read_bytes():
            found.append(str(path.relative_to(root)))
    return found


def _send(hippo: Hippo, cwd: str, body: m.Body, *, kill: bool = False) -> dict[str, object]:
    """One request on its own connection; with `kill`, the daemon is SIGKILLed as soon as the
    reply is read (inside the mirror writer's one-second window)."""
    with hippo.raw() as conn:
        conn.hello()
        conn.send(m.Request(id=1, cwd=cwd, body=body))
        reply = conn.recv()
        if kill:
            hippo.kill()
    assert isinstance(reply, m.Result), reply
    return dict(reply.data)


@pytest.mark.parametrize("layout", ["memory", "day"])
def test_a_rejected_or_forgotten_text_leaves_the_disk_before_the_reply(hippo: Hippo, layout: str) -> None:
    hippo.start()
    folder, _ = project(hippo, config={"autoSleep": {"enabled": False}, "mirrors": {"layout": layout}})
    root = os.path.join(folder, ".hippo")
    rejected = str(_send(hippo, folder, m.Remember(content=REJECTED))["id"])
    forgotten = str(_send(hippo, folder, m.Remember(content=FORGOTTEN))["id"])
    # A raw receipt of the rejected text: it is archived, and its mirror loses the text.
    raw = str(_send(hippo, folder, m.Remember(content=REJECTED, kind="raw"))["id"])
    kept = str(_send(hippo, folder, m.Remember(content=KEPT))["id"])
    assert hippo.wait_for(lambda: _holding(root, REJECTED) and _holding(root, FORGOTTEN), timeout=30)
    assert hippo.wait_for(lambda: _holding(root, KEPT), timeout=30)

    _send(hippo, folder, m.Forget(id=forgotten))
    done = _send(hippo, folder, m.Reject(id=rejected, reason="a secret"), kill=True)

    assert rejected in done["removed"] and raw in done["archived"], done
    assert _holding(root, REJECTED) == []
    assert _holding(root, FORGOTTEN) == []
    assert not list(Path(root).rglob(f"{rejected}.md")) and not list(Path(root).rglob(f"{forgotten}.md"))
    assert _holding(root, KEPT), f"the mirror of {kept} went with the others"


def test_the_daemons_start_heals_a_registered_store_without_a_request(hippo: Hippo) -> None:
    # No agent tool: the note watcher opens no project store, so only the start's own heal can.
    hippo.env["HIPPO_AGENT_MEMORY_TOOLS"] = "none"
    hippo.start()
    folder, _ = project(hippo, config={"autoSleep": {"enabled": False}})
    root = os.path.join(folder, ".hippo")
    gone = str(_send(hippo, folder, m.Remember(content=REJECTED))["id"])
    mirror = Path(root, "episodic", f"{gone}.md")
    assert hippo.wait_for(mirror.is_file, timeout=30)
    text = mirror.read_text()
    hippo.ok("reject", gone, "--reason", "a secret", cwd=folder)
    assert not mirror.exists()
    registered = json.loads(Path(hippo.home, "workspaces.json").read_text())["workspaces"]
    assert os.path.realpath(folder) in registered
    hippo.stop()
    # Left over (put back from a backup, or by a daemon of an older version killed in time).
    mirror.write_text(text)
    stray = Path(root, "semantic", "sem_000000000000.md")
    stray.parent.mkdir(exist_ok=True)
    stray.write_text("a memory forgotten long ago\n")

    hippo.start()
    assert hippo.wait_for(lambda: not mirror.exists() and not stray.exists(), timeout=60)
    assert _holding(root, REJECTED) == []
