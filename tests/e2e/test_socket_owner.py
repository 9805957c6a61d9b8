"""Nobody else's socket: the client checks the socket's folders and the process behind it before it
sends a byte, and the daemon will not bind in a folder another user could have prepared."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from e2e.other_user import NAME, ensure
from hippoctl.protocol import paths, spool

if TYPE_CHECKING:
    from e2e.harness import Hippo

OTHER = NAME
PAYLOAD = {"session_id": "sess-owner", "cwd": "/home/u/proj", "hook_event_name": "SessionEnd"}


@pytest.fixture(scope="session")
def other_user() -> pwd.struct_passwd:
    """The second OS user of the e2e tests (e2e/other_user.py), as the user database has it."""
    return pwd.getpwnam(ensure().name)


@pytest.fixture
def sticky_tmp() -> Iterator[str]:
    """A shared temp folder like /tmp (1777), where any user can make names."""
    folder = tempfile.mkdtemp(prefix="hpt", dir="/tmp")
    os.chmod(folder, 0o1777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class Listener:
    """A process running as another user that listens on a Unix socket and records what it receives."""

    def __init__(self, user: pwd.struct_passwd, path: str, log: str) -> None:
        self.log = log
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                os.close(ready_r)
                os.setgroups([])
                os.setgid(user.pw_gid)
                os.setuid(user.pw_uid)
                os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
                server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                server.bind(path)
                os.chmod(path, 0o777)
                server.listen(16)
                os.write(ready_w, b"ready")
                os.close(ready_w)
                while True:
                    conn, _ = server.accept()
                    conn.settimeout(5)
                    data = b""
                    with contextlib.suppress(OSError):
                        while chunk := conn.recv(65536):
                            data += chunk
                    conn.close()
                    with open(log, "a", encoding="utf-8") as handle:
                        handle.write(f"connection with {len(data)} bytes\n")
            finally:
                os._exit(0)
        os.close(ready_w)
        with os.fdopen(ready_r, "rb") as handle:
            ready = handle.read()
        self.pid = pid
        assert ready == b"ready", "the other user's listener did not start"

    def received(self) -> list[str]:
        try:
            with open(self.log, encoding="utf-8") as handle:
                return handle.read().splitlines()
        except FileNotFoundError:
            return []

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)


def fallback_env(hippo: Hippo, tmp: str) -> dict[str, str]:
    """No private runtime dir: the socket falls back to $TMPDIR/runtime-<uid>/hippo/."""
    if os.path.isdir(f"/run/user/{os.getuid()}"):
        pytest.skip("this machine has a /run/user runtime dir, so the $TMPDIR fallback is never used")
    env = hippo.daemon_env(HIPPO_SOCKET=None, XDG_RUNTIME_DIR=None, TMPDIR=tmp)
    return env


def refused_start(hippo: Hippo, env: dict[str, str] | None = None) -> str:
    """Start `hippod run`, which must refuse (exit 1, the README's table); returns its stderr."""
    daemon = hippo.spawn(env=env)
    assert daemon.wait(timeout=60) == 1
    return hippo.output(daemon)[1]


def spooled(hippo: Hippo, kind: str) -> list[dict[str, object]]:
    folder = os.path.join(hippo.home, "spool", kind)
    documents = []
    for name in spool.json_names(folder):
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            documents.append(json.load(handle))
    return documents


def test_a_socket_folder_made_first_by_another_user_is_refused(
    hippo: Hippo, other_user: pwd.struct_passwd, sticky_tmp: str
) -> None:
    """Another user made $TMPDIR/runtime-<uid>/hippo/ and listens there: nothing reaches them, the
    client exits 3 naming the folder and its owner, a hook spools, and our daemon will not bind."""
    env = fallback_env(hippo, sticky_tmp)
    taken = os.path.join(sticky_tmp, f"runtime-{os.getuid()}")
    sock = os.path.join(taken, "hippo", paths.socket_file_name(paths.instance_key(env)))
    listener = Listener(other_user, sock, os.path.join(sticky_tmp, "received.log"))
    try:
        done = hippo.ctl("remember", "The otter stash is under the third pier", env=env)
        assert done.returncode == 3, done
        assert done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith(f"hippoctl: refusing to talk to hippod on {sock}: {taken} is owned by ")
        assert f"{OTHER} (uid {other_user.pw_uid})" in done.stderr

        hook = hippo.ctl("session-end", input=json.dumps(PAYLOAD), env=env)
        assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")
        assert [d["stdin"] for d in spooled(hippo, "session-end")] == [PAYLOAD]
        strict = hippo.ctl("session-end", "--strict", input=json.dumps(PAYLOAD), env=env)
        assert strict.returncode == 3
        assert f"{taken} is owned by {OTHER}" in strict.stderr and "the request waits in" in strict.stderr

        err = refused_start(hippo, env)
        assert err.startswith(
            f"hippod: refusing the socket folder {os.path.dirname(sock)}: {taken} is owned by "
        )
        assert listener.received() == []
    finally:
        listener.stop()
    assert not os.path.exists(os.path.join(hippo.home, "hippo.db"))  # no daemon of ours ever ran


def test_a_socket_served_by_another_user_is_refused(
    hippo: Hippo, other_user: pwd.struct_passwd, sticky_tmp: str
) -> None:
    """Even in our own private folder, a socket whose listener runs as another uid gets no bytes."""
    theirs = os.path.join(sticky_tmp, "theirs", "s.sock")
    listener = Listener(other_user, theirs, os.path.join(sticky_tmp, "received.log"))
    try:
        os.rename(theirs, hippo.socket)  # as if planted: the folder check alone would pass
        done = hippo.ctl("--no-spawn", "recall", "otter")
        assert done.returncode == 3, done
        assert done.stderr == (
            f"hippoctl: refusing to talk to hippod on {hippo.socket}: it is served by "
            f"{OTHER} (uid {other_user.pw_uid}), not by root (uid 0)\n"
        )
        hook = hippo.ctl("session-end", input=json.dumps(PAYLOAD))
        assert hook.returncode == 0, hook
        assert [d["stdin"] for d in spooled(hippo, "session-end")] == [PAYLOAD]
        # The connections it accepted carried nothing: the client sent no byte.
        assert hippo.wait_for(lambda: len(listener.received()) == 2, timeout=30), listener.received()
        assert listener.received() == ["connection with 0 bytes"] * 2
    finally:
        listener.stop()


def test_hippo_socket_in_another_users_folder_is_refused(
    hippo: Hippo, other_user: pwd.struct_passwd, sticky_tmp: str
) -> None:
    folder = os.path.join(sticky_tmp, "theirs")
    os.mkdir(folder, 0o700)
    os.chown(folder, other_user.pw_uid, other_user.pw_gid)
    env = hippo.daemon_env(HIPPO_SOCKET=os.path.join(folder, "d.sock"))
    err = refused_start(hippo, env)
    assert err == (
        f"hippod: refusing the socket folder {folder}: {folder} is owned by "
        f"{OTHER} (uid {other_user.pw_uid}), not by root (uid 0)\n"
    )
    assert os.listdir(folder) == []


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770])
def test_hippo_socket_in_a_folder_others_can_write_is_refused(hippo: Hippo, mode: int) -> None:
    """Daemon and client alike refuse a socket folder that others can write, sticky or not."""
    folder = os.path.join(hippo.root, "open")
    os.mkdir(folder)
    os.chmod(folder, mode)
    env = hippo.daemon_env(HIPPO_SOCKET=os.path.join(folder, "d.sock"))
    err = refused_start(hippo, env)
    assert err == (
        f"hippod: refusing the socket folder {folder}: {folder} is writable by other users "
        f"(mode {stat.S_IMODE(os.stat(folder).st_mode):o}, owner root (uid 0))\n"
    )
    done = hippo.ctl("--no-spawn", "status", env=env)
    assert done.returncode == 3
    assert done.stderr.startswith(f"hippoctl: refusing to talk to hippod on {folder}/d.sock: {folder} is")
    assert os.listdir(folder) == []


def _without_override(argv: list[str]) -> list[str]:
    """argv run so that folder modes bind it: as root, without the capabilities that pass over them
    (a mode-000 folder then stops root as it stops any other user)."""
    if os.getuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("no setpriv (util-linux): needed to run a client that root's override does not help")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}", *argv]


def test_a_socket_folder_that_cannot_be_searched_is_one_line(hippo: Hippo) -> None:
    """Client and daemon alike name the folder they cannot look into, in one line: no traceback."""
    locked = os.path.join(hippo.root, "locked")
    folder = os.path.join(locked, "sock")
    os.makedirs(folder, mode=0o700)
    env = hippo.daemon_env(HIPPO_SOCKET=os.path.join(folder, "d.sock"))
    os.chmod(locked, 0)
    try:
        for spawn in (["--no-spawn"], []):
            argv = _without_override([sys.executable, "-m", "hippoctl", *spawn, "status"])
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
            assert (done.returncode, done.stderr) == (
                3,
                f"hippoctl: cannot reach hippod on {folder}/d.sock: {folder}: Permission denied\n",
            ), spawn
        argv = _without_override([sys.executable, "-m", "hippod", "run"])
        started = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
        assert (started.returncode, started.stderr) == (
            1,
            f"hippod: cannot use the socket folder {folder}: {folder}: Permission denied\n",
        )
    finally:
        os.chmod(locked, 0o700)
