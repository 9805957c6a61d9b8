"""Daemon lifecycle: auto-start, single instance, stale leftovers, graceful stop, runtime dir rules."""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hippoctl.protocol import messages as m

if TYPE_CHECKING:
    from e2e.harness import Hippo

STOP_FIRST = "stop it first: hippoctl daemon stop"


def lock_pid(path: str) -> int:
    match = re.search(r"^pid (\d+)$", Path(path).read_text(), re.MULTILINE)
    assert match, Path(path).read_text()
    return int(match.group(1))


# --- auto-start ---------------------------------------------------------------------------------------


def test_client_spawns_missing_daemon(hippo: Hippo) -> None:
    assert not os.path.exists(hippo.socket)
    done = hippo.ctl("remember", "Kestrel nests are on the north tower", timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Remembered [")

    info = hippo.json("daemon", "status")
    pid = info["pid"]
    assert hippo.pid_alive(pid)
    assert lock_pid(hippo.lock) == pid
    assert info["socket"] == hippo.socket
    data = hippo.json("recall", "kestrel tower")
    assert [r["content"] for r in data["results"]] == ["Kestrel nests are on the north tower"]

    # A second client finds the same daemon rather than spawning another.
    hippo.ok("remember", "Kestrel chicks fledge in June")
    assert hippo.json("daemon", "status")["pid"] == pid
    done = hippo.ok("daemon", "stop")
    assert done.stdout.strip() == "hippod stopped"
    assert hippo.wait_for(lambda: not hippo.pid_alive(pid), timeout=20)


# Loaded on start-up by a daemon whose PYTHONPATH holds its folder: loading the daemon's modules
# (after it has taken its lock) takes SLOW_LOAD_SECONDS, as on a machine busy with other work.
SLOW_LOAD = """
import sys, time

class SlowLoad:
    def find_spec(self, name, path=None, target=None):
        if name == "hippod.daemon.app":
            time.sleep({seconds})
            {then}
        return None

sys.meta_path.insert(0, SlowLoad())
"""
SLOW_LOAD_SECONDS = 6


@pytest.mark.long
def test_client_waits_for_a_spawned_daemon_that_is_slow_to_load(hippo: Hippo) -> None:
    folder = os.path.join(hippo.root, "slow-load")
    os.makedirs(folder)
    Path(folder, "sitecustomize.py").write_text(SLOW_LOAD.format(seconds=SLOW_LOAD_SECONDS, then="pass"))
    env = hippo.daemon_env(PYTHONPATH=folder)
    done = hippo.ctl("remember", "Swifts sleep on the wing", env=env, timeout=60)
    # Past the 5 s spawn window, the daemon holding its lock is waited for, not given up on.
    assert done.returncode == 0, done.stderr
    pid = hippo.json("daemon", "status")["pid"]
    assert lock_pid(hippo.lock) == pid
    results = hippo.json("recall", "swifts wing")["results"]
    assert [r["content"] for r in results] == ["Swifts sleep on the wing"]

    # A client with less time than that keeps to the spawn window.
    hippo.ok("daemon", "stop")
    assert hippo.wait_for(lambda: not hippo.pid_alive(pid), timeout=20)
    done = hippo.ctl("--timeout", "3", "status", env=env, timeout=60)
    assert done.returncode == 3, done.stderr
    log = os.path.join(hippo.home, "logs", "hippod.log")
    assert done.stderr.strip() == f"hippoctl: hippod did not start within 5 s; see {log}"


def test_a_spawned_daemon_that_dies_while_loading_is_not_waited_for(hippo: Hippo) -> None:
    folder = os.path.join(hippo.root, "broken-load")
    os.makedirs(folder)
    broken = 'raise ImportError("hippod.daemon.app is broken")'
    Path(folder, "sitecustomize.py").write_text(SLOW_LOAD.format(seconds=SLOW_LOAD_SECONDS, then=broken))
    # The client would wait up to its 600 s for a daemon holding its lock; this one lets go of it.
    done = hippo.ctl("--timeout", "600", "status", env=hippo.daemon_env(PYTHONPATH=folder), timeout=120)
    assert done.returncode == 3, done.stderr
    log = os.path.join(hippo.home, "logs", "hippod.log")
    assert done.stderr.strip() == f"hippoctl: hippod exited while starting; see {log}"
    assert not hippo.answers()
    # The log it points to says why (a spawned daemon's stderr goes nowhere).
    text = Path(log).read_text(encoding="utf-8")
    assert "hippod stopped on an unexpected error" in text, text
    assert "ImportError: hippod.daemon.app is broken" in text, text


def test_no_spawn_exits_3(hippo: Hippo) -> None:
    for args, env in (
        (["--no-spawn", "remember", "Heron waits by the weir"], hippo.env),
        (["remember", "Heron waits by the weir"], hippo.daemon_env(HIPPO_NO_SPAWN="1")),
        (["recall", "--no-spawn", "heron"], hippo.env),
        (["status"], hippo.daemon_env(HIPPO_NO_SPAWN="1")),
    ):
        done = hippo.ctl(*args, env=env, timeout=15)
        assert done.returncode == 3, (args, done.returncode, done.stderr)
        assert done.stdout == ""
        assert done.stderr.strip() == f"hippoctl: hippod is not running (no answer on {hippo.socket})"
    assert not os.path.exists(hippo.socket)
    assert not os.path.exists(hippo.db)


def test_daemon_start_and_version_without_daemon(hippo: Hippo) -> None:
    done = hippo.ok("version")
    assert "hippod: not running" in done.stdout
    assert not os.path.exists(hippo.socket)  # version never spawns

    done = hippo.ok("daemon", "start")
    match = re.fullmatch(r"hippod started \(pid (\d+)\)\n", done.stdout)
    assert match, done.stdout
    pid = int(match.group(1))
    assert hippo.answers() == pid
    done = hippo.ok("daemon", "start")
    assert done.stdout.strip() == f"hippod already running (pid {pid})"

    done = hippo.ok("daemon", "restart")
    new_pid = hippo.answers()
    assert new_pid is not None and new_pid != pid
    assert f"hippod started (pid {new_pid})" in done.stdout
    assert hippo.wait_for(lambda: not hippo.pid_alive(pid), timeout=20)


# --- single instance ----------------------------------------------------------------------------------


def test_two_daemons_race_one_wins(hippo: Hippo) -> None:
    first = hippo.spawn()
    second = hippo.spawn()
    procs = [first, second]
    assert hippo.wait_for(lambda: any(p.poll() is not None for p in procs), timeout=30)
    loser = next(p for p in procs if p.poll() is not None)
    winner = second if loser is first else first
    loser.wait(timeout=30)
    out, err = hippo.output(loser)
    assert loser.returncode == 3, (out, err)
    assert out == ""
    assert err == f"hippod: already running (pid {winner.pid}, socket {hippo.socket}); {STOP_FIRST}\n"
    assert winner.poll() is None
    assert hippo.answers() == winner.pid
    assert lock_pid(hippo.lock) == winner.pid
    hippo.ok("remember", "Osprey dives for trout at dawn")
    assert hippo.stop(winner) == 0


def test_second_daemon_defers_to_running_one(hippo: Hippo) -> None:
    pid = hippo.start()
    for args in ((), ("--foreground",)):
        late = hippo.spawn(*args)
        assert late.wait(timeout=30) == 3
        out, err = hippo.output(late)
        assert out == ""
        assert err == f"hippod: already running (pid {pid}, socket {hippo.socket}); {STOP_FIRST}\n"
        assert hippo.answers() == pid
    # --detach only wants a daemon in the background: there is one.
    late = hippo.spawn("--detach")
    assert late.wait(timeout=30) == 0
    assert hippo.output(late)[0] == f"hippod already running (pid {pid})\n"


def test_stale_socket_and_lock_after_sigkill(hippo: Hippo) -> None:
    old = hippo.start()
    hippo.ok("remember", "Badger setts have many entrances")
    hippo.kill()
    assert os.path.exists(hippo.socket) and os.path.exists(hippo.lock)
    assert lock_pid(hippo.lock) == old
    done = hippo.ctl("--no-spawn", "status")
    assert done.returncode == 3  # a dead socket file is not a daemon

    new = hippo.start()
    assert new != old
    assert lock_pid(hippo.lock) == new
    data = hippo.json("recall", "badger setts")
    assert [r["content"] for r in data["results"]] == ["Badger setts have many entrances"]


def test_leftover_plain_socket_file_and_bogus_lock(hippo: Hippo) -> None:
    # A socket file nobody listens on, and a lock file naming a pid that is gone.
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leftover.bind(hippo.socket)
    leftover.close()
    Path(hippo.lock).write_text("pid 999999\nstarted 2020-01-01T00:00:00+0000\nversion 0.0.0\n")
    pid = hippo.start()
    assert lock_pid(hippo.lock) == pid
    hippo.ok("remember", "Marten tracks lead to the old barn")


# --- graceful shutdown --------------------------------------------------------------------------------


def test_sigterm_shuts_down_cleanly(hippo: Hippo) -> None:
    hippo.start()
    for n in ("one", "two", "three"):
        hippo.ok("remember", f"Stoat sighting number {n} near the hedge")
    project = os.path.join(hippo.root, "proj")
    os.makedirs(project)
    hippo.ok("init", cwd=project)
    hippo.ok("remember", "Stoat project note about the hedge", cwd=project)
    assert os.path.exists(hippo.db + "-wal")

    assert hippo.stop() == 0
    assert not os.path.exists(hippo.socket)
    assert not os.path.exists(hippo.lock)
    for db in (hippo.db, os.path.join(project, ".hippo", "hippo.db")):
        wal = db + "-wal"
        assert not os.path.exists(wal) or os.path.getsize(wal) == 0, f"{wal} was not checkpointed"
    state = Path(hippo.home, "daemon-state.json")
    assert state.exists()

    hippo.start()
    assert hippo.json("status")["stores"][0]["total"] == 3


def test_daemon_stop_verb(hippo: Hippo) -> None:
    hippo.start()
    done = hippo.ok("daemon", "stop")
    assert done.stdout.strip() == "hippod stopped"
    assert hippo.proc is not None
    assert hippo.proc.wait(timeout=30) == 0
    assert not os.path.exists(hippo.socket)
    assert not os.path.exists(hippo.lock)

    done = hippo.ok("daemon", "stop")
    assert done.stdout.strip() == "hippod is not running"
    assert not os.path.exists(hippo.socket)  # stop never spawns


def test_request_after_shutdown_started_is_refused(hippo: Hippo) -> None:
    """A connection accepted before SIGTERM gets shutting_down rather than hanging."""
    hippo.start()
    with hippo.raw() as conn:
        assert isinstance(conn.hello(), m.Welcome)
        assert hippo.proc is not None
        hippo.proc.terminate()
        assert hippo.wait_for(lambda: not os.path.exists(hippo.socket), timeout=20)
        try:
            conn.send(m.Request(id=5, cwd=hippo.root, body=m.Status()))
            reply = conn.recv()
        except (BrokenPipeError, ConnectionResetError):
            reply = None
        if reply is not None:
            assert isinstance(reply, m.Error) and reply.code == "shutting_down" and reply.id == 5, reply
            assert reply.exit_code == 3
    assert hippo.proc.wait(timeout=30) == 0


# --- runtime dir --------------------------------------------------------------------------------------


def _default_location_env(hippo: Hippo) -> dict[str, str]:
    return hippo.daemon_env(HIPPO_SOCKET=None)


def test_default_socket_location_permissions(hippo: Hippo) -> None:
    env = _default_location_env(hippo)
    done = hippo.ctl("remember", "Vole tunnels run under the lawn", env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    done = hippo.ctl("--json", "daemon", "status", env=env)
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    sock = info["socket"]
    folder = os.path.join(hippo.runtime, "hippo")
    assert os.path.dirname(sock) == folder
    assert re.fullmatch(r"hippod-[0-9a-f]{12}\.sock", os.path.basename(sock)), sock
    st = os.stat(sock)
    assert stat.S_ISSOCK(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(sock + ".lock").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.join(hippo.home, "hippo.db")).st_mode) == 0o600
    assert not os.path.exists(hippo.socket)
    done = hippo.ctl("daemon", "stop", env=env)
    assert done.stdout.strip() == "hippod stopped"
    assert hippo.wait_for(lambda: not hippo.pid_alive(info["pid"]), timeout=20)


def test_open_runtime_dir_is_refused(hippo: Hippo) -> None:
    env = _default_location_env(hippo)
    folder = os.path.join(hippo.runtime, "hippo")
    os.makedirs(folder)
    os.chmod(folder, 0o755)
    proc = subprocess.run(
        [sys.executable, "-m", "hippod", "run"],
        env=env,
        cwd=hippo.root,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("hippod: runtime dir ")
    assert folder in lines[0] and "755" in lines[0]
    assert os.listdir(folder) == []  # no socket, no lock
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o755  # not silently "fixed"
    assert "accessible to other users" in Path(hippo.log).read_text()

    # A client that tries to auto-start this daemon gives up after its spawn window.
    done = hippo.ctl("remember", "Shrew notes never land", env=env, timeout=60)
    assert done.returncode == 3, done.stderr
    log = os.path.join(os.path.realpath(hippo.home), "logs", "hippod.log")
    expected = f"hippoctl: hippod did not start within 5 s; see {log}"
    assert done.stderr.strip() == expected
    assert os.listdir(folder) == []


def test_bad_daemon_json_values_fall_back_to_defaults(hippo: Hippo) -> None:
    os.makedirs(hippo.home, mode=0o700)
    with open(os.path.join(hippo.home, "daemon.json"), "w", encoding="utf-8") as handle:
        handle.write('{"maxFrameBytes": "big", "shutdownGraceSeconds": -1, "log": "loud"}')
    hippo.start()
    hippo.ok("remember", "Pangolins roll into a ball when threatened")
    log = Path(hippo.log).read_text(encoding="utf-8")
    for key in (
        "maxFrameBytes must be a number",
        "shutdownGraceSeconds must be a number",
        "log must be an object",
    ):
        assert key in log, log
    assert hippo.stop() == 0
