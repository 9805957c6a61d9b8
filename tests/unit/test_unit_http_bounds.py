"""The pure parts of the HTTP listeners' bounds: the connection cap under an open-file limit, and
the settings in daemon.json."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from hippod.base.config import load_daemon_config
from hippod.web.asgi_server import AsgiServer, bind, resolve
from hippod.web.connections import BUDGET, Bounds, cap_for


@pytest.mark.parametrize(
    ("soft", "configured", "cap"),
    [
        (None, 1000, 1000),  # unlimited (or Windows): the setting alone
        (8192, 1000, 1000),  # the daemon's own raised limit: the setting
        (1024, 1000, 768),  # systemd's default: a quarter stays for the daemon's own files
        (256, 1000, 192),
        (64, 1000, 32),  # a tiny limit: at most half
        (1024, 10, 10),
        (2, 1000, 1),  # never nothing at all
    ],
)
def test_the_cap_leaves_room_below_the_open_file_limit(soft: int | None, configured: int, cap: int) -> None:
    assert cap_for(soft, configured) == cap


def test_the_bounds_have_defaults_and_daemon_json_sets_them(tmp_path: Path) -> None:
    defaults = Bounds.from_config(load_daemon_config(str(tmp_path)).values["http"])
    assert defaults == Bounds(header_seconds=10, body_seconds=30, keep_alive_seconds=5, max_connections=1000)
    settings = {"headerTimeoutSeconds": 2.5, "bodyTimeoutSeconds": 4, "keepAliveSeconds": 1.5}
    (tmp_path / "daemon.json").write_text(json.dumps({"http": {**settings, "maxConnections": 50}}))
    given = Bounds.from_config(load_daemon_config(str(tmp_path)).values["http"])
    assert given == Bounds(2.5, 4, 1.5, 50)
    assert given.keep_alive_whole_seconds == 2  # uvicorn counts whole seconds: never shorter than asked


def test_unusable_bounds_fall_back_to_the_defaults_with_a_warning(tmp_path: Path) -> None:
    bad = {
        "headerTimeoutSeconds": 0,
        "bodyTimeoutSeconds": "long",
        "keepAliveSeconds": -1,
        "maxConnections": 0,
    }
    (tmp_path / "daemon.json").write_text(json.dumps({"http": bad}))
    loaded = load_daemon_config(str(tmp_path))
    assert Bounds.from_config(loaded.values["http"]) == Bounds(10, 30, 5, 1000)
    assert len(loaded.warnings) == 4 and all("http." in warning for warning in loaded.warnings)


async def test_a_listener_that_closes_before_serving_what_it_accepted_leaves_no_count() -> None:
    # asyncio makes an accepted connection's protocol a turn later; a listener closed first (serve
    # --stop in a burst) never serves it, and its count must go with it, or the cap shrinks for good.
    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("nothing is served")

    sock = bind("127.0.0.1", 0, await resolve("127.0.0.1", 0))
    before = BUDGET.pending
    with socket.create_connection(sock.getsockname()[:2]):
        conn, _ = sock.accept()  # admitted by the gate, as asyncio's accept pass does
        with conn:
            assert BUDGET.pending == before + 1
            server = AsgiServer(app, sock, "test", Bounds(1, 1, 1, 10))
            await server.close()
    assert BUDGET.pending == before and sock not in BUDGET.gates
