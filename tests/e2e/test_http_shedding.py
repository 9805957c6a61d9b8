"""The daemon at its open-file limit: accepts that fail for want of files make one line a minute,
not one a failure (thousands a second), and the daemon serves again once files are free."""

from __future__ import annotations

import resource
import socket
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from e2e.harness import Hippo

# Generous for a loaded machine: what is checked is that the connections close, not how fast.
DEADLINE = 60.0
needs_prlimit = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prlimit(2) is Linux's")


@pytest.fixture(autouse=True)
def _enough_files() -> None:
    """This test process opens hundreds of sockets: its soft limit goes up to what the hard one allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4096 if hard == resource.RLIM_INFINITY else min(hard, 4096)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _close(socks: Iterable[socket.socket]) -> None:
    for sock in socks:
        sock.close()


def _log(hippo: Hippo) -> str:
    return Path(hippo.log).read_text(encoding="utf-8", errors="replace")


@needs_prlimit
def test_failed_accepts_make_one_line_not_one_each(hippo: Hippo) -> None:
    pid = hippo.start()
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (256, 256))
    # More connections than the daemon has files: those past its limit cannot be accepted.
    flood = []
    try:
        for _ in range(400):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(hippo.socket)
            flood.append(sock)
        assert hippo.wait_for(lambda: "accept" in _log(hippo), DEADLINE)
    finally:
        _close(flood)
    assert hippo.wait_for(lambda: hippo.ctl("status", "--global").returncode == 0, DEADLINE)
    hippo.stop()
    # The daemon did run out of files (its other work may say so too), but the failed accepts,
    # thousands of them, make one warning line a minute.
    lines = [line for line in _log(hippo).splitlines() if "accept" in line]
    assert 1 <= len(lines) <= 3, (len(lines), lines[:5])
    assert all(" WARNING hippod.files: could not accept " in line for line in lines), lines
