"""No file is opened through a planted link: the lock, the log and spool files are opened with
O_NOFOLLOW, and a link at their path is refused by name while the file it points at stays as it was."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from e2e.test_socket_owner import refused_start

if TYPE_CHECKING:
    from e2e.harness import Hippo


def victim_file(hippo: Hippo) -> str:
    """A file a planted link points at, which must come through untouched."""
    path = os.path.join(hippo.root, "victim.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("precious\n")
    return path


def untouched(path: str) -> bool:
    with open(path, encoding="utf-8") as handle:
        return handle.read() == "precious\n"


def test_lock_file_planted_as_a_link_is_refused(hippo: Hippo) -> None:
    """`$HIPPO_SOCKET.lock` linked to another file: the daemon names it and leaves the file alone."""
    victim = victim_file(hippo)
    os.symlink(victim, hippo.lock)
    err = refused_start(hippo)
    assert err == f"hippod: lock file {hippo.lock} is a symbolic link; remove it\n"
    assert untouched(victim)
    assert not os.path.exists(hippo.socket)
    os.unlink(hippo.lock)
    hippo.start()  # with the link gone it starts


def test_log_file_planted_as_a_link_is_refused(hippo: Hippo) -> None:
    victim = victim_file(hippo)
    os.makedirs(os.path.dirname(hippo.log), mode=0o700)
    os.symlink(victim, hippo.log)
    err = refused_start(hippo)
    assert err == f"hippod: log file {hippo.log} is a symbolic link; remove it\n"
    assert untouched(victim)


def test_spool_file_planted_as_a_link_is_not_replayed(hippo: Hippo) -> None:
    """A link in the spool pointing at a valid spool document: set aside as failed, never read."""
    document = {
        "v": 1,
        "kind": "capture-error",
        "created_at": "2026-10-01T00:00:00Z",
        "cwd": hippo.root,
        "env": {},
        "argv": ["capture-error"],
        "stdin": {"session_id": "s", "tool_name": "Bash", "error": "make: *** No rule to make target 'x'."},
    }
    victim = os.path.join(hippo.root, "victim.json")
    with open(victim, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    before = os.stat(victim)
    kind = os.path.join(hippo.home, "spool", "capture-error")
    os.makedirs(kind, mode=0o700)
    name = "20261001T000000000-1-abcd"
    os.symlink(victim, os.path.join(kind, name + ".json"))
    hippo.start()
    failed = os.path.join(hippo.home, "spool", "failed")
    assert hippo.wait_for(lambda: os.path.exists(os.path.join(failed, name + ".err")), 60)
    with open(os.path.join(failed, name + ".err"), encoding="utf-8") as handle:
        assert "not replayable: cannot read: it is a symbolic link" in handle.read()
    assert os.path.islink(os.path.join(failed, name + ".json"))  # the link moved, not what it points at
    after = os.stat(victim)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert hippo.json("status")["stores"][0]["total"] == 0
