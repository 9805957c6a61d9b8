"""One daemon per home (daemon.md §3): the single-instance lock covers the home, not the socket.

A client whose computed socket differs from the running daemon's (a hook run without
XDG_RUNTIME_DIR, another HIPPO_SOCKET) finds that daemon through the record in the home, or is
refused naming it; a second `hippod run` for the home exits 3 naming the first; log lines carry the
pid of the daemon that wrote them.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2e.harness import RawConn
from e2e.sleep_support import query
from e2e.transcripts import claude_records, write_jsonl
from hippoctl.protocol import instance, spool
from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo
    from e2e.other_user import OtherUser

WAIT = 60.0
BARE_PATH = "/usr/bin:/bin"
HIPPOCTL = os.path.join(os.path.dirname(sys.executable), "hippoctl")
STOP_FIRST = "stop it first: hippoctl daemon stop"
LOG_LINE = re.compile(r"^\S+ \[(\d+)\] (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: ")


class Login:
    """A daemon as a login session starts it: XDG_RUNTIME_DIR set, neither HIPPO_HOME nor
    HIPPO_SOCKET, the default home (`~/.local/share/hippo`) under the instance's own HOME."""

    def __init__(self, hippo: Hippo) -> None:
        self.hippo = hippo
        self.env = hippo.daemon_env(
            HIPPO_HOME=None, HIPPO_SOCKET=None, XDG_DATA_HOME=None, XDG_STATE_HOME=None
        )
        self.home = os.path.join(hippo.user_home, ".local", "share", "hippo")
        self.socket = os.path.join(hippo.runtime, "hippo", "hippod.sock")
        self.log = os.path.join(hippo.user_home, ".local", "state", "hippo", "log", "hippod.log")
        # Where a bare environment's client falls back to on a machine without /run/user/<uid>:
        # inside the test's folder, not the machine's /tmp/runtime-<uid>.
        self.tmp = os.path.join(hippo.root, "tmp")
        os.makedirs(self.tmp, mode=0o700)
        self.bare = os.path.join(hippo.root, "bare")  # a folder without a project store
        os.makedirs(self.bare)

    def start(self) -> int:
        proc = self.hippo.spawn(env=self.env)
        assert self.hippo.wait_for(lambda: answers(self.socket) == proc.pid or proc.poll() is not None, WAIT)
        assert proc.poll() is None, self.hippo.output(proc)
        return proc.pid

    def hook(self, verb: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        """The hook as an agent host with a bare environment runs it: no XDG_RUNTIME_DIR, no
        HIPPO_* variables, `/bin/sh -c` with PATH=/usr/bin:/bin and the client by absolute path."""
        argv = [
            "/usr/bin/env",
            "-i",
            f"HOME={self.hippo.user_home}",
            f"TMPDIR={self.tmp}",
            f"PATH={BARE_PATH}",
        ]
        argv += ["/bin/sh", "-c", f"{shlex.quote(HIPPOCTL)} {verb}"]
        return subprocess.run(
            argv, cwd=self.bare, input=json.dumps(payload), capture_output=True, text=True, timeout=WAIT
        )

    def consolidations(self) -> int:
        conn = sqlite3.connect(f"file:{os.path.join(self.home, 'hippo.db')}?mode=ro", uri=True, timeout=30)
        try:
            return int(conn.execute("SELECT count(*) FROM consolidation_runs").fetchone()[0])
        finally:
            conn.close()

    def pending(self) -> list[str]:
        return spool.json_names(os.path.join(self.home, "spool", "session-end"))


def answers(path: str, home: str = "") -> int | None:
    """The pid of the daemon answering Hello on `path` for `home` ("" is the default home)."""
    try:
        with RawConn(path, home, timeout=1.0) as conn:
            reply = conn.hello()
    except OSError:
        return None
    return reply.pid if isinstance(reply, m.Welcome) else None


def session_end_payload(hippo: Hippo, cwd: str, session: str) -> dict[str, Any]:
    path = Path(hippo.user_home, ".claude", "projects", "-bare", f"{session}.jsonl")
    write_jsonl(path, claude_records(["Set up the stores"], ["Done."]))
    return {"session_id": session, "transcript_path": str(path), "cwd": cwd,
            "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}  # fmt: skip


def test_hooks_without_xdg_runtime_dir_reach_the_running_daemon(hippo: Hippo) -> None:
    """The daemon runs on $XDG_RUNTIME_DIR/hippo/hippod.sock; hooks run with a bare environment
    compute another socket. They reach that daemon: no second daemon starts for the home, each
    SessionEnd is consolidated once, and a spooled request is replayed once."""
    login = Login(hippo)
    first = login.start()
    start = {"session_id": "s1", "cwd": login.bare, "hook_event_name": "SessionStart", "source": "startup"}
    done = login.hook("last-sleep", start)
    assert (done.returncode, done.stderr) == (0, ""), done
    done = login.hook("session-end", session_end_payload(hippo, login.bare, "s1"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done
    # The spool holds a session end until its job has committed: an empty spool means it is done.
    assert hippo.wait_for(lambda: login.consolidations() >= 1 and not login.pending(), WAIT)
    # A session end a hook could not deliver, waiting in the spool for the daemon to replay.
    payload = session_end_payload(hippo, login.bare, "s2")
    document = spool.SpoolFile(v=spool.VERSION, kind="session-end", created_at="2026-10-01T00:00:00Z",
                               cwd=login.bare, env={}, argv=["session-end"], stdin=payload)  # fmt: skip
    spool.write(login.home, spool.new_name(), document)
    assert hippo.wait_for(lambda: login.consolidations() >= 2 and not login.pending(), WAIT)
    assert hippo.daemon_pids() == {first}
    assert not os.path.exists(os.path.join(login.tmp, f"runtime-{os.getuid()}", "hippo", "hippod.sock"))
    assert login.consolidations() == 2  # one per SessionEnd
    replays = [
        LOG_LINE.match(line) for line in Path(login.log).read_text().splitlines() if "spool: replayed" in line
    ]
    assert replays and all(match is not None and int(match.group(1)) == first for match in replays), replays


def test_a_second_daemon_for_the_home_on_another_socket_exits_3_naming_the_first(hippo: Hippo) -> None:
    first = hippo.start()
    other = os.path.join(hippo.root, "other.sock")
    env = hippo.daemon_env(HIPPO_SOCKET=other)
    late = hippo.spawn(env=env)
    assert late.wait(timeout=30) == 3
    assert hippo.output(late) == (
        "",
        f"hippod: already running (pid {first}, socket {hippo.socket}); {STOP_FIRST}\n",
    )
    assert not os.path.exists(other)
    # --detach and `daemon start` only want a daemon for the home: there is one.
    detached = hippo.spawn("--detach", env=env)
    assert detached.wait(timeout=30) == 0
    assert hippo.output(detached)[0] == f"hippod already running (pid {first})\n"
    done = hippo.ctl("daemon", "start", env=env)
    assert (done.returncode, done.stdout) == (0, f"hippod already running (pid {first})\n"), done
    # A client of that socket talks to the home's daemon, and can stop it.
    status = json.loads(hippo.ctl("--json", "daemon", "status", env=env).stdout)
    assert (status["pid"], status["socket"]) == (first, hippo.socket)
    done = hippo.ctl("daemon", "stop", env=env)
    assert (done.returncode, done.stdout) == (0, "hippod stopped\n"), done
    assert hippo.proc is not None and hippo.proc.wait(timeout=WAIT) == 0
    assert hippo.daemon_pids() == set()


def test_a_client_refused_by_the_homes_daemon_socket_names_it_and_a_hook_spools(hippo: Hippo) -> None:
    """The record names a socket in a folder others can write to: the client will not talk to it,
    says which daemon it found, and starts no other; a hook spools its request instead."""
    folder = os.path.join(hippo.root, "s")
    sock = os.path.join(folder, "d.sock")
    first = hippo.start(env=hippo.daemon_env(HIPPO_SOCKET=sock), socket_path=sock)
    os.chmod(folder, 0o777)
    env = hippo.daemon_env(HIPPO_SOCKET=os.path.join(hippo.root, "other.sock"))
    done = hippo.ctl("status", env=env)
    assert done.returncode == 3, done
    [line] = done.stderr.splitlines()
    assert line.startswith(
        f"hippoctl: hippod (pid {first}) serves {hippo.home} on {sock}; refusing to talk to it: "
    )
    assert f"{folder} is writable by other users" in line
    error = {
        "session_id": "s",
        "cwd": hippo.root,
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "make x"},
        "error": "make: *** No rule to make target 'x'. Stop.",
    }
    done = hippo.ctl("capture-error", input=json.dumps(error), env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done
    assert hippo.daemon_pids() == {first}
    # The hook spooled its request, and the daemon, which watches the spool, replayed it.
    assert hippo.wait_for(lambda: "spool: replayed 1 hook requests" in Path(hippo.log).read_text(), WAIT)
    assert query(hippo.db, "SELECT count(*) FROM tool_failures") == [(1,)]


def test_log_lines_carry_the_pid(hippo: Hippo) -> None:
    pid = hippo.start()
    hippo.ok("remember", "Kingfishers nest in riverbank burrows")
    assert hippo.stop() == 0
    lines = Path(hippo.log).read_text().splitlines()
    assert any("listening on" in line for line in lines)
    for line in lines:
        match = LOG_LINE.match(line)
        assert match is not None and int(match.group(1)) == pid, line


def test_a_client_naming_the_default_home_explicitly_is_at_the_same_home(hippo: Hippo) -> None:
    """HIPPO_HOME set to the default folder is the home a daemon started without it serves: the
    client is welcomed, not refused with home_mismatch."""
    login = Login(hippo)
    first = login.start()
    assert answers(login.socket, os.path.realpath(login.home)) == first
    assert answers(login.socket, os.path.join(hippo.root, "elsewhere")) is None


def test_a_client_of_the_default_home_is_refused_by_a_daemon_of_another_home(hippo: Hippo) -> None:
    """The harness's daemon serves its own HIPPO_HOME: a client with none (the default home) is
    refused with home_mismatch, not served from another home's stores."""
    hippo.start()
    assert answers(hippo.socket, hippo.home) is not None
    assert answers(hippo.socket, "") is None


def test_a_home_lock_of_another_users_file_is_not_a_daemon(hippo: Hippo, other_user: OtherUser) -> None:
    """A home another user can write: their flocked `hippod.lock` does not make this user's client
    wait for a daemon that is not there."""
    os.makedirs(hippo.home, mode=0o700)
    lock = instance.lock_path(hippo.home)
    with open(lock, "w", encoding="utf-8") as planted:
        os.chown(lock, other_user.uid, -1)
        fcntl.flock(planted, fcntl.LOCK_EX)
        assert not instance.lock_held(lock)
        os.chown(lock, os.getuid(), -1)
        assert instance.lock_held(lock)  # the same lock, ours: held
