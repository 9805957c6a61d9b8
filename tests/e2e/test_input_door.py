"""Input is checked at the door: stdin is held to the rules an argument is, and a hook input that can
never be applied is kept in the spool's failed/ folder with the reason instead of vanishing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from e2e.sleep_support import query

if TYPE_CHECKING:
    from e2e.harness import Hippo

BAD = b"Staging deploys need \xff the VPN up first"
BAD_LINE = "stdin is not valid UTF-8 (byte 0xff at offset 21)"
LONE = (
    '{"session_id": "s1", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "cwd": "/tmp", '
    '"tool_input": {"command": "make"}, "error": "make: *** bad \\ud800 target"}'
)


def run_bytes(hippo: Hippo, args: list[bytes], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable.encode(), b"-m", b"hippoctl", *args],
        cwd=hippo.root,
        input=stdin,
        env=hippo.env,
        capture_output=True,
        timeout=30,
    )


def failed_folder(hippo: Hippo) -> Path:
    return Path(hippo.home, "spool", "failed")


def test_bytes_that_are_not_utf8_are_refused_on_stdin_as_in_an_argument(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("init", "--global")
    mem = hippo.json("remember", "Old deploy note for supersede", "--global")["id"]
    argument = run_bytes(hippo, [b"remember", BAD, b"--global"])
    assert (argument.returncode, argument.stdout) == (2, b"")
    assert argument.stderr == b"hippoctl: error: memory text is not valid UTF-8\n"
    for args in (
        [b"remember", b"-", b"--global"],
        [b"supersede", mem.encode(), b"-", b"--global"],
        [b"decide", b"-", b"--global"],
        [b"reject", b"--value", b"-", b"--reason", b"wrong", b"--global"],
        [b"capture", b"--stdin", b"--global"],
    ):
        done = run_bytes(hippo, args, BAD)
        assert (done.returncode, done.stdout) == (2, b""), (args, done)
        assert done.stderr == f"hippoctl: error: {BAD_LINE}\n".encode(), (args, done.stderr)
    hippo.stop()
    rows = query(hippo.db, "SELECT content FROM memories")
    assert rows == [("Old deploy note for supersede",)]
    assert query(hippo.db, "SELECT count(*) FROM memories WHERE content LIKE '%' || char(65533) || '%'") == [
        (0,)
    ]


def test_a_lone_surrogate_in_a_capture_error_payload_goes_to_failed_with_its_reason(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("init", "--global")
    done = hippo.ctl("capture-error", input=LONE)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    names = sorted(os.listdir(failed_folder(hippo)))
    assert [n.rsplit(".", 1)[1] for n in names] == ["err", "json"]
    document = json.loads((failed_folder(hippo) / names[1]).read_text())
    assert (document["kind"], document["stdin"]) == ("capture-error", LONE)
    note = (failed_folder(hippo) / names[0]).read_text()
    assert note.endswith(
        " not replayable: the input holds the escape \\ud800, a lone surrogate, not valid UTF-8\n"
    )
    assert hippo.json("daemon", "status")["spool"] == {"pending": 0, "failed": 1}
    # --strict says so in one line, with the usage exit code.
    strict = hippo.ctl("capture-error", "--strict", input=LONE)
    assert strict.returncode == 2 and strict.stdout == ""
    assert strict.stderr.startswith("hippoctl: capture-error: the input holds the escape \\ud800")
    assert f"; kept in {failed_folder(hippo)}{os.sep}" in strict.stderr
    assert len(strict.stderr.splitlines()) == 1
    hippo.stop()
    assert query(hippo.db, "SELECT count(*) FROM memories") == [(0,)]
    assert query(hippo.db, "SELECT count(*) FROM tool_failures") == [(0,)]


def test_hook_input_that_is_not_utf8_is_kept_in_failed_and_never_fails_the_host(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("init", "--global")
    body = b'{"session_id": "s1", "cwd": "/tmp", "error": "caf\xe9"}'
    for verb in (b"capture-error", b"session-end", b"pre-compact", b"post-compact"):
        done = run_bytes(hippo, [verb], body)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), (verb, done)
    notes = sorted(failed_folder(hippo).glob("*.err"))
    assert len(notes) == 4
    assert all(
        n.read_text().endswith(" not replayable: the input is not valid UTF-8 (byte 0xe9 at offset 49)\n")
        for n in notes
    )
    kinds = sorted(json.loads(n.with_suffix(".json").read_text())["kind"] for n in notes)
    assert kinds == ["capture-error", "post-compact", "pre-compact", "session-end"]
    stored = json.loads(notes[0].with_suffix(".json").read_text())["stdin"]
    assert stored == '{"session_id": "s1", "cwd": "/tmp", "error": "caf\\xe9"}'
    # The per-prompt hook and compact-resume are never spooled: quiet, or one line with --strict.
    for args in ([b"context", b"--pinned-only"], [b"compact-resume"]):
        done = run_bytes(hippo, args, body)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), (args, done)
    strict = run_bytes(hippo, [b"context", b"--pinned-only", b"--strict"], body)
    assert (strict.returncode, strict.stdout) == (2, b"")
    assert strict.stderr == b"hippoctl: error: the input is not valid UTF-8 (byte 0xe9 at offset 49)\n"
    assert hippo.json("daemon", "status")["spool"] == {"pending": 0, "failed": 4}
