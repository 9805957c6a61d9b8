"""End-to-end: nothing leaves the machine unless the user turned it on. A daemon with every extra
loaded (the embedding model on onnxruntime, the dashboard, the HTTP API) runs under strace, which
sees the connect() calls of native code as well as Python's, through remember, recall, embed, sleep,
the dashboard and `serve`; it connects to nothing but loopback, and no telemetry store appears in
its home (onnxruntime's 1DS telemetry keeps one in ~/.cache/Microsoft)."""

from __future__ import annotations

import os
import re
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import programs
import pytest

from e2e.http_support import create_key

if TYPE_CHECKING:
    from e2e.harness import Hippo

pytestmark = [
    pytest.mark.embeddings,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="strace is Linux's"),
]

# strace -f prints "PID connect(FD, {sa_family=AF_..., ...}, LEN" whether or not the call then blocks.
_CONNECT = re.compile(r"connect\(\d+, \{sa_family=(?P<family>AF_\w+)(?P<rest>.*?)\}, \d+")
# A datagram sent to an address of its own, with no connect() first: sendto's fifth argument, or
# sendmsg's msg_name (a send on a connected socket names none, and its connect() is checked).
_ADDRESSED = re.compile(r"(?:sendto|sendmsg)\(\d+, .*?\{sa_family=(?P<family>AF_\w+)(?P<rest>.*?)\}")
_IPV4 = re.compile(r'inet_addr\("(?P<addr>[^"]*)"\)')
_IPV6 = re.compile(r'inet_pton\(AF_INET6, "(?P<addr>[^"]*)"')
_UNIX = re.compile(r'sun_path=(?P<path>@?"[^"]*")')
# glibc asks the name-service cache daemon, over this local socket, before it reads /etc/passwd
# itself when the daemon looks up a user's name (absent here, so each try fails with ENOENT).
_NSCD = ("/var/run/nscd/socket", "/run/nscd/socket")


def _stays_here(family: str, rest: str, own_socket: str) -> bool:
    """Whether one connect() stays on this machine: to 127.0.0.0/8 or ::1, the daemon's own socket
    or glibc's name-service cache, or AF_UNSPEC (which takes a datagram socket's peer away rather
    than naming one)."""
    if family in ("AF_UNSPEC", "AF_NETLINK"):  # AF_NETLINK: the kernel (the peer lookup's sock_diag)
        return True
    if family == "AF_INET":
        addr = _IPV4.search(rest)
        return addr is not None and addr["addr"].startswith("127.")
    if family == "AF_INET6":
        addr = _IPV6.search(rest)
        return addr is not None and (addr["addr"] == "::1" or addr["addr"].startswith("::ffff:127."))
    if family == "AF_UNIX":
        path = _UNIX.search(rest)
        return path is not None and path["path"].strip('"') in (own_socket, *_NSCD)
    return False


def _outside(trace: str, own_socket: str) -> list[str]:
    """The connect() and addressed send lines of a trace that reach past loopback and the daemon's own
    socket."""
    found = []
    for line in trace.splitlines():
        call = _CONNECT.search(line) or _ADDRESSED.search(line)
        if call is not None and not _stays_here(call["family"], call["rest"], own_socket):
            found.append(line)
        elif call is None and "connect(" in line and "resumed>" not in line:
            found.append(line)  # a connect() this parser cannot read counts against it
    return found


def test_a_daemon_with_every_extra_connects_only_to_loopback(hippo: Hippo) -> None:
    trace = os.path.join(hippo.root, "connect.trace")
    # --seccomp-bpf stops the daemon only at connect(), so the model loads at nearly full speed.
    tracer = (
        programs.strace(),
        "-f",
        "-qq",
        "--seccomp-bpf",
        "-e",
        "trace=connect,sendto,sendmsg",
        "-e",
        "signal=none",
        "-o",
        trace,
    )
    daemon = hippo.start(wrap=tracer)
    folder = os.path.join(hippo.root, "proj")
    os.makedirs(os.path.join(folder, ".hippo"))
    hippo.ok("init", cwd=folder)
    hippo.ok("remember", "The staging deploy needs the VPN up before helm upgrade", cwd=folder)
    hippo.ok("remember", "Grafana alerts page the on-call through the pager bridge", cwd=folder)
    embedded = hippo.json("embed", cwd=folder)
    assert all(not s.get("unavailable") for s in embedded["stores"]), embedded
    assert any(s["embedded"] for s in embedded["stores"]), embedded
    assert "VPN" in hippo.ok("recall", "what must be up before a deploy", cwd=folder).stdout
    hippo.ok("sleep", "--no-share", cwd=folder)
    board = hippo.json("dashboard", "--no-open", "--port", "0", cwd=folder)
    api = hippo.json("serve", "--port", "0")
    key = create_key(hippo)
    with httpx.Client(timeout=30) as client:
        assert client.get(board["url"]).status_code == 200
        assert client.get(f"{api['url']}/health").status_code == 200
        stored = client.post(
            f"{api['url']}/v1/memories",
            json={"content": "The pager bridge retries three times before it gives up"},
            headers={"Authorization": f"Bearer {key}"},
        )
        assert stored.status_code == 201, stored.text
    os.kill(daemon, signal.SIGTERM)
    assert hippo.proc is not None
    assert hippo.proc.wait(timeout=60) == 0  # strace exits with the daemon's own code

    text = Path(trace).read_text()
    assert "connect(" in text, "the trace saw no connect() at all: it did not trace the daemon"
    assert _outside(text, hippo.socket) == []
    for cache in (Path(hippo.env["HOME"], ".cache"), Path(hippo.env["XDG_CACHE_HOME"])):
        assert not (cache / "Microsoft").exists()
    assert [str(p) for p in Path(hippo.root).rglob("*Microsoft*")] == []
