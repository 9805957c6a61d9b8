"""The daemon's side of systemd (daemon.md §4, §13): READY=1 and STOPPING=1 on $NOTIFY_SOCKET, and
adopting a socket passed as fd 3 (socket activation)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from e2e.harness import Hippo

# Sets LISTEN_PID to its own pid (which the daemon keeps through exec), puts the socket on fd 3 and
# becomes the daemon: what systemd does for a socket-activated service.
ACTIVATE = (
    "import os, sys, time\n"
    "time.sleep(float(sys.argv[2]))\n"
    "fd = int(sys.argv[1])\n"
    "os.dup2(fd, 3)\n"
    "os.close(fd)\n"
    "os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS='1', LISTEN_FDNAMES='hippod.socket')\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'hippod', 'run'])\n"
)


@pytest.fixture
def notify_socket(hippo: Hippo) -> Iterator[tuple[socket.socket, str]]:
    """A datagram socket standing in for systemd's notification socket."""
    path = os.path.join(hippo.root, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(20)
    yield sock, path
    sock.close()


def messages(sock: socket.socket) -> list[str]:
    return sock.recv(4096).decode().split("\n")


def test_ready_when_listening_and_stopping_on_the_way_out(
    hippo: Hippo, notify_socket: tuple[socket.socket, str]
) -> None:
    sock, path = notify_socket
    pid = hippo.start(env=hippo.daemon_env(NOTIFY_SOCKET=path))
    assert messages(sock) == ["READY=1"]
    assert hippo.answers() == pid
    assert hippo.stop() == 0
    assert messages(sock) == ["STOPPING=1"]


def test_ready_on_an_abstract_notify_socket(hippo: Hippo) -> None:
    name = f"hippo-test-{os.getpid()}-{os.path.basename(hippo.root)}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(20)
        hippo.start(env=hippo.daemon_env(NOTIFY_SOCKET="@" + name))
        assert messages(sock) == ["READY=1"]


def test_a_service_start_while_a_daemon_runs_reports_ready_and_exits_0(
    hippo: Hippo, notify_socket: tuple[socket.socket, str]
) -> None:
    sock, path = notify_socket
    pid = hippo.start()
    # A unit started at login after a client had already started a daemon: systemd waits for READY=1.
    second = hippo.spawn("--foreground", env=hippo.daemon_env(NOTIFY_SOCKET=path))
    assert second.wait(timeout=30) == 0
    assert messages(sock) == ["READY=1", f"STATUS=hippod already running (pid {pid})"]
    assert hippo.answers() == pid


@pytest.fixture
def listening(hippo: Hippo) -> Iterator[socket.socket]:
    """The socket systemd would bind from hippod.socket, at the path the client connects to."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(hippo.socket)
    os.chmod(hippo.socket, 0o600)
    sock.listen(16)
    yield sock
    sock.close()


def activate(hippo: Hippo, sock: socket.socket, delay: float = 0.0) -> subprocess.Popen[str]:
    """Start hippod as systemd would on a connection to `sock`, `delay` seconds late (a slow start)."""
    err = open(os.path.join(hippo.root, "activated.err"), "w+", encoding="utf-8")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-c", ACTIVATE, str(sock.fileno()), str(delay)],
        env=hippo.env,
        cwd=hippo.root,
        pass_fds=(sock.fileno(),),
        stdin=subprocess.DEVNULL,
        stdout=err,
        stderr=err,
        text=True,
    )
    proc.out_file = proc.err_file = err  # type: ignore[attr-defined]
    hippo.procs.append(proc)
    return proc


def test_socket_activation_serves_the_passed_socket(hippo: Hippo, listening: socket.socket) -> None:
    proc = activate(hippo, listening)
    # The client connects to the socket before the daemon is up, as it would through systemd.
    done = hippo.ctl("remember", "Swifts sleep on the wing", timeout=60)
    assert done.returncode == 0, done.stderr
    status = hippo.json("daemon", "status")
    assert status["pid"] == proc.pid
    assert status["socket_activated"] is True
    assert status["socket"] == hippo.socket
    assert "(socket activation: yes)" in hippo.ok("daemon", "status").stdout
    inode = os.stat(hippo.socket).st_ino

    assert hippo.stop(proc) == 0
    # The socket belongs to systemd: it outlives the daemon, still listening, for the next start.
    assert os.stat(hippo.socket).st_ino == inode
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.connect(hippo.socket)


def test_a_slow_socket_activated_start_is_waited_for(hippo: Hippo, listening: socket.socket) -> None:
    # The listening socket accepts the client at once; the daemon behind it takes its lock only
    # after the client's 2 s wait for a Welcome: it is starting, not gone.
    proc = activate(hippo, listening, delay=2.5)
    done = hippo.ctl("remember", "Swifts sleep on the wing", timeout=60)
    assert done.returncode == 0, done.stderr
    assert hippo.json("daemon", "status")["pid"] == proc.pid


def test_a_socket_activated_daemon_keeps_serving_when_socket_activation_is_installed_again(
    hippo: Hippo, listening: socket.socket
) -> None:
    proc = activate(hippo, listening)
    assert hippo.wait_for(lambda: hippo.answers() == proc.pid, timeout=30)
    done = hippo.ok("daemon", "install-service", "--socket-activation")
    assert "hippod stops now" not in done.stdout
    assert hippo.answers() == proc.pid


def test_the_daemon_does_not_hand_the_passed_socket_to_its_children(
    hippo: Hippo, listening: socket.socket
) -> None:
    proc = activate(hippo, listening)
    assert hippo.wait_for(lambda: hippo.answers() == proc.pid, timeout=30)
    # systemd passes the socket inheritable; a child (git, say) must not keep it open.
    flags = Path(f"/proc/{proc.pid}/fdinfo/3").read_text()
    [line] = [x for x in flags.splitlines() if x.startswith("flags:")]
    assert int(line.split()[1], 8) & 0o2000000, line  # O_CLOEXEC


def test_a_socket_file_bound_by_someone_else_since_is_left_in_place(hippo: Hippo) -> None:
    proc = hippo.spawn()
    hippo.proc = proc
    assert hippo.wait_for(lambda: hippo.answers() == proc.pid, timeout=30)
    # As when socket activation is enabled while a daemon runs: systemd binds the path anew.
    os.unlink(hippo.socket)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as replacement:
        replacement.bind(hippo.socket)
        replacement.listen(1)
        inode = os.stat(hippo.socket).st_ino
        assert hippo.stop(proc) == 0
        assert os.stat(hippo.socket).st_ino == inode
