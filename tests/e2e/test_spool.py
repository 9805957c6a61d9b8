"""The spool (ingest.md §8, daemon.md §10.5): hook verbs that cannot reach the daemon leave their
request in a file and exit 0; the daemon replays each file exactly once, keeps failures for
inspection, and never crashes on a bad file."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.sleep_support import query
from hippoctl.protocol import messages as m
from hippoctl.protocol import spool
from hippod.jobs.spool_replay import tries_so_far

if TYPE_CHECKING:
    from e2e.harness import Hippo

NAME = re.compile(r"^\d{8}T\d{9}-\d+-[0-9a-f]{4}\.json$")
WAIT = 60.0


def word(i: int) -> str:
    """A word of letters only for each number, so that errors differ in shape, not just in digits."""
    return "".join(chr(ord("a") + int(d)) for d in f"{i:04d}")


def payload(i: int, session: str = "sess-spool") -> str:
    return json.dumps(
        {
            "session_id": session,
            "cwd": "/home/u/proj",
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": f"make {word(i)}"},
            "error": f"make: *** No rule to make target '{word(i)}'. Stop.",
            "is_interrupt": False,
        }
    )


def folder(hippo: Hippo, kind: str = "capture-error") -> str:
    return os.path.join(hippo.home, "spool", kind)


def pending(hippo: Hippo) -> list[str]:
    """Spool files waiting in every kind folder."""
    return [n for k in spool.KINDS for n in spool.json_names(folder(hippo, k))]


def failed(hippo: Hippo) -> list[str]:
    return sorted(os.listdir(folder(hippo, "failed"))) if os.path.isdir(folder(hippo, "failed")) else []


def hook_offline(hippo: Hippo, text: str, *args: str) -> None:
    """A hook call while no daemon answers: prints nothing, exits 0."""
    env = hippo.daemon_env(HIPPO_NO_SPAWN="1", HIPPO_SESSION_ID="env-session")
    done = hippo.ctl("capture-error", *args, input=text, env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done


def contents(db: str) -> list[str]:
    return [r[0] for r in query(db, "SELECT content FROM memories ORDER BY content")]


def log_rows(db: str) -> list[tuple[Any, ...]]:
    return query(db, "SELECT session_id, outcome, exact_hash FROM tool_failures ORDER BY id")


def write_file(hippo: Hippo, name: str, document: dict[str, Any] | bytes, kind: str = "capture-error") -> str:
    """Put a spool file in place (a finished file appears at once, as the client's rename does)."""
    os.makedirs(folder(hippo, kind), mode=0o700, exist_ok=True)
    path = os.path.join(folder(hippo, kind), name)
    data = document if isinstance(document, bytes) else json.dumps(document).encode()
    Path(path + ".tmp").write_bytes(data)
    os.replace(path + ".tmp", path)
    return path


def spooled(text: str, cwd: str, argv: list[str] | None = None) -> dict[str, Any]:
    return {
        "v": 1,
        "kind": "capture-error",
        "created_at": "2026-10-01T00:00:00Z",
        "cwd": cwd,
        "env": {},
        "argv": argv or ["capture-error"],
        "stdin": json.loads(text) if text.startswith("{") else text,
    }


def test_hooks_spool_while_the_daemon_is_down_and_each_replays_once(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("init", "--global")
    hippo.kill()  # SIGKILL: the socket file stays behind and nobody answers on it
    for i in range(5):
        hook_offline(hippo, payload(i))
    hook_offline(hippo, payload(5), "--no-spawn")
    hook_offline(hippo, payload(6, session=""))  # no session in the payload: the env's is used
    names = sorted(pending(hippo))
    assert len(names) == 7
    assert all(NAME.match(n) for n in names), names
    for path in (os.path.join(hippo.home, "spool"), folder(hippo)):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    first = json.loads(Path(folder(hippo), names[0]).read_text())
    assert first["v"] == 1 and first["kind"] == "capture-error"
    assert first["env"] == {"HIPPO_SESSION_ID": "env-session"}
    assert first["argv"] == ["capture-error"]
    assert first["cwd"] == hippo.root
    assert first["stdin"] == json.loads(payload(0))
    assert sorted(os.listdir(folder(hippo))) == names  # no temporary files left

    hippo.start()
    assert hippo.wait_for(lambda: not pending(hippo), WAIT), pending(hippo)
    stored = contents(hippo.db)
    assert len(stored) == 7
    for i in range(7):
        assert sum(f"'{word(i)}'" in c for c in stored) == 1, (i, stored)
    rows = log_rows(hippo.db)
    assert len(rows) == 7 and {r[1] for r in rows} == {"stored"}
    assert rows[-1][0] == "env-session"
    assert hippo.ok("daemon", "status").stdout.count("spool: 0 pending, 0 failed") == 1
    assert hippo.json("daemon", "status")["spool"] == {"pending": 0, "failed": 0}


def test_a_file_appearing_while_the_daemon_runs_is_replayed(hippo: Hippo) -> None:
    hippo.start()
    write_file(hippo, spool.new_name(), spooled(payload(1), hippo.root))
    assert hippo.wait_for(lambda: not pending(hippo), WAIT)
    assert hippo.wait_for(lambda: len(log_rows(hippo.db)) == 1, WAIT)
    assert contents(hippo.db) == [f"Bash failed: make: *** No rule to make target '{word(1)}'. Stop. "
                                  f"(command: make {word(1)})"]  # fmt: skip


def test_a_stalled_daemon_does_not_hold_the_hook_and_the_request_applies_once(hippo: Hippo) -> None:
    pid = hippo.start()
    hippo.ok("init", "--global")
    os.kill(pid, signal.SIGSTOP)
    try:
        env = hippo.daemon_env(HIPPO_HOOK_TIMEOUT_MS="1000")
        done = hippo.ctl("capture-error", input=payload(3), env=env, timeout=60)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        assert len(pending(hippo)) == 1
        # With --strict the exhausted budget is reported, and the request is spooled all the same.
        done = hippo.ctl("capture-error", "--strict", input=payload(4), env=env, timeout=60)
        assert done.returncode == 3
        assert done.stderr.startswith("hippoctl: ")
        assert len(pending(hippo)) == 2
    finally:
        os.kill(pid, signal.SIGCONT)
    # The daemon may also have received the live requests; each key is applied once either way.
    assert hippo.wait_for(lambda: not pending(hippo), WAIT)
    assert hippo.wait_for(lambda: len(log_rows(hippo.db)) >= 2, WAIT)
    hippo.stop()
    assert len(log_rows(hippo.db)) == 2
    assert len(contents(hippo.db)) == 2


def test_the_hook_does_not_wait_for_stdin_to_close(hippo: Hippo) -> None:
    env = hippo.daemon_env(HIPPO_NO_SPAWN="1", HIPPO_HOOK_TIMEOUT_MS="500")
    proc = subprocess.Popen(
        [sys.executable, "-m", "hippoctl", "capture-error"],
        cwd=hippo.root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    proc.stdin.write(b'{"tool_name": "Bash", ')
    proc.stdin.flush()
    try:
        out, err = proc.communicate(timeout=30)  # stdin stays open: the budget ends the read
    finally:
        proc.kill()
    assert (proc.returncode, out, err) == (0, b"", b"")
    [name] = pending(hippo)
    assert json.loads(Path(folder(hippo), name).read_text())["stdin"] == '{"tool_name": "Bash", '


def test_bad_files_go_to_failed_with_a_note_and_the_daemon_carries_on(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("init", "--global")
    write_file(hippo, "20260101T000000000-1-0001.json", b"{not json")
    write_file(hippo, "20260101T000000000-1-0002.json", spooled("plain words", hippo.root))
    odd = spooled(payload(1), hippo.root) | {"kind": "telepathy"}
    write_file(hippo, "20260101T000000000-1-0003.json", odd, kind="telepathy")
    write_file(hippo, "20260101T000000000-1-0004.json", spooled(payload(2), "relative/dir"))
    Path(hippo.home, "spool", "stray.json").write_text(json.dumps(spooled(payload(3), hippo.root)))
    write_file(hippo, "20260101T000000000-1-0005.json", spooled(payload(5), hippo.root))  # a good one
    notes = {
        "20260101T000000000-1-0001": "not replayable: not a spool file: not valid JSON",
        "20260101T000000000-1-0002": "not replayable: capture-error: the input is not a JSON object",
        "20260101T000000000-1-0003": "not replayable: unknown kind 'telepathy'",
        "20260101T000000000-1-0004": "not replayable: cwd is not an absolute path",
        "stray": "a spool file belongs in spool/<kind>/, not in spool/ itself",
    }
    expected = sorted(f"{stem}{ext}" for stem in notes for ext in (".err", ".json"))
    assert hippo.wait_for(lambda: failed(hippo) == expected, WAIT), failed(hippo)
    for stem, note in notes.items():
        text = Path(folder(hippo, "failed"), stem + ".err").read_text()
        assert re.fullmatch(r"\S+Z " + re.escape(note) + "\n", text), text
    assert hippo.wait_for(lambda: not pending(hippo), WAIT)
    assert len(log_rows(hippo.db)) == 1  # the good file, and nothing from the bad ones
    status = hippo.json("daemon", "status")
    assert status["spool"] == {"pending": 0, "failed": 5}
    assert "spool: 0 pending, 5 failed" in hippo.ok("daemon", "status").stdout
    hippo.ok("remember", "the daemon still serves requests")


def test_a_file_that_keeps_failing_ends_in_failed_after_three_tries(hippo: Hippo) -> None:
    # A project whose hippo.db another program wrote: opening it fails every time (foreign_store).
    project = os.path.join(hippo.root, "foreign")
    os.makedirs(os.path.join(project, ".hippo"))
    conn = sqlite3.connect(os.path.join(project, ".hippo", "hippo.db"))
    conn.execute("CREATE TABLE other (x)")
    conn.commit()
    conn.close()
    name = "20260101T000000000-7-abcd.json"
    path = write_file(hippo, name, spooled(payload(1), project))
    err = path[:-5] + ".err"
    for attempt in (1, 2):
        hippo.start()  # each start tries every pending file again
        assert hippo.wait_for(lambda n=attempt: tries_so_far(err) == n, WAIT), attempt  # type: ignore[misc]
        assert os.path.exists(path)
        hippo.stop()
    hippo.start()
    moved = os.path.join(folder(hippo, "failed"), name)
    assert hippo.wait_for(lambda: os.path.exists(moved[:-5] + ".err"), WAIT)
    assert not os.path.exists(path) and not os.path.exists(err) and os.path.exists(moved)
    lines = Path(moved[:-5] + ".err").read_text().splitlines()
    assert len(lines) == 3
    for n, line in enumerate(lines, 1):
        assert re.fullmatch(rf"\S+Z try {n} of 3: .*was not written by hippod and will not be opened", line)
    assert hippo.json("daemon", "status")["spool"] == {"pending": 0, "failed": 1}


def test_a_replay_committed_before_a_kill_is_not_applied_again(hippo: Hippo) -> None:
    """The daemon dies after committing a replay but before deleting its file: the file is back."""
    hippo.start()
    hippo.ok("init", "--global")
    hippo.kill()
    hook_offline(hippo, payload(1))
    [name] = pending(hippo)
    saved = Path(folder(hippo), name).read_bytes()
    hippo.start()
    assert hippo.wait_for(lambda: not pending(hippo), WAIT)
    hippo.kill()
    assert len(log_rows(hippo.db)) == 1
    write_file(hippo, name, saved)  # as if the unlink never happened
    hippo.start()
    assert hippo.wait_for(lambda: not pending(hippo), WAIT)
    assert hippo.wait_for(lambda: "was applied before" in Path(hippo.log).read_text(), WAIT)
    assert len(log_rows(hippo.db)) == 1
    assert len(contents(hippo.db)) == 1
    assert failed(hippo) == []


def test_a_live_request_and_its_spool_file_apply_once(hippo: Hippo) -> None:
    """The client gave up waiting and spooled a request the daemon then applied live after all."""
    hippo.start()
    hippo.ok("init", "--global")
    name = spool.new_name()
    body = m.CaptureError(payload=json.loads(payload(1)), spool_key=spool.key_of(name))
    with hippo.raw() as conn:
        conn.hello()
        conn.send(m.Request(id=1, cwd=hippo.root, body=body))
        reply = conn.recv()
    assert isinstance(reply, m.Result) and reply.data["outcome"] == "stored"
    write_file(hippo, name, spooled(payload(1), hippo.root))
    assert hippo.wait_for(lambda: not pending(hippo), WAIT)
    assert hippo.wait_for(lambda: "was applied before" in Path(hippo.log).read_text(), WAIT)
    assert len(log_rows(hippo.db)) == 1
    # The same key sent live again changes nothing either.
    with hippo.raw() as conn:
        conn.hello()
        conn.send(m.Request(id=2, cwd=hippo.root, body=body))
        reply = conn.recv()
    assert isinstance(reply, m.Error)
    assert reply.message == f"hook request {spool.key_of(name)} was already applied"
    assert len(log_rows(hippo.db)) == 1


def test_killing_the_daemon_mid_replay_applies_every_file_exactly_once(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("init", "--global")
    hippo.stop()
    # Each capture is counted as stored: an automatic sleep past 50 would merge the near-copies.
    Path(hippo.home, "config.json").write_text('{"autoSleep": {"enabled": false}}')
    count = 150
    root = hippo.home
    for i in range(count):
        document = spool.SpoolFile(**spooled(payload(i), hippo.root))  # type: ignore[arg-type]
        spool.write(root, spool.new_name(), document)
    assert len(pending(hippo)) == count
    hippo.start()
    assert hippo.wait_for(lambda: len(pending(hippo)) < count - 10, WAIT)
    hippo.kill()
    left = len(pending(hippo))
    hippo.start()
    assert hippo.wait_for(lambda: not pending(hippo), WAIT), (left, len(pending(hippo)))
    hippo.stop()
    rows = log_rows(hippo.db)
    assert len(rows) == count
    assert len({r[2] for r in rows}) == count
    assert len(contents(hippo.db)) == count
