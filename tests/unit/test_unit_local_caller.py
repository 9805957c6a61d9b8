"""Who a loopback connection comes from (web/peer.py), the rules a keyless request must pass
(web/local_caller.py), and the local token's file (base/local_token.py), on real sockets and files."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hippod.base import local_token
from hippod.web import local_caller, peer


@pytest.fixture(
    params=[
        (socket.AF_INET, "127.0.0.1", socket.AF_INET, "127.0.0.1"),
        (socket.AF_INET6, "::1", socket.AF_INET6, "::1"),
        (socket.AF_INET, "127.0.0.1", socket.AF_INET6, "::ffff:127.0.0.1"),  # a dual-stack client
    ],
    ids=["ipv4", "ipv6", "dual-stack"],
)
def connection(request: pytest.FixtureRequest) -> Iterator[tuple[tuple[str, int], tuple[str, int]]]:
    """A real loopback connection: (the client's address, the server's), as the server sees them."""
    family, host, client_family, target = request.param
    with socket.socket(family) as listener:
        listener.bind((host, 0))
        listener.listen()
        with socket.socket(client_family) as client:
            client.connect((target, listener.getsockname()[1]))
            accepted, address = listener.accept()
            with accepted:
                yield (address[0], address[1]), accepted.getsockname()[:2]


def test_the_peer_of_a_loopback_connection_is_found_by_both_lookups(
    connection: tuple[tuple[str, int], tuple[str, int]],
) -> None:
    client, server = connection
    assert peer.available()
    assert peer.peer_uid(client, server) == os.getuid()
    assert peer._by_table(client, server) == os.getuid()
    # The server's own end is not the client: its local address is the server's.
    assert peer.peer_uid(server, (client[0], client[1] + 1 if client[1] < 65535 else 1)) is None
    assert peer.peer_uid((client[0], 1), server) is None
    assert peer.peer_uid(("not an address", 1), server) is None


def _scope(
    connection: tuple[tuple[str, int], tuple[str, int]], method: str = "GET", **headers: str
) -> dict[str, Any]:
    client, server = connection
    given = {"host": f"127.0.0.1:{server[1]}", **{k.replace("_", "-"): v for k, v in headers.items()}}
    return {
        "type": "http",
        "method": method,
        "client": client,
        "server": server,
        "headers": [(k.encode(), v.encode()) for k, v in given.items()],
    }


def test_the_owner_passes_and_each_rule_refuses_with_its_reason(
    connection: tuple[tuple[str, int], tuple[str, int]],
) -> None:
    port = connection[1][1]
    assert local_caller.refusal(_scope(connection), "/t") is None
    assert local_caller.refusal(_scope(connection, "POST", content_type="application/json"), "/t") is None
    own = f"http://localhost:{port}"
    assert (
        local_caller.refusal(_scope(connection, "GET", origin=own, sec_fetch_site="same-origin"), "/t")
        is None
    )
    cases = [
        (_scope(connection, host=f"evil.example:{port}"), 403, "Host"),
        (_scope(connection, origin="http://evil.example"), 403, "web page"),
        (_scope(connection, origin=f"http://localhost:{port + 1 if port < 65535 else 1}"), 403, "web page"),
        (_scope(connection, sec_fetch_site="cross-site"), 403, "another site"),
        (_scope(connection, "POST", content_type="text/plain"), 415, "application/json"),
        (_scope(connection, "POST"), 415, "application/json"),
    ]
    for scope, status, words in cases:
        refused = local_caller.refusal(scope, "/t")
        assert refused is not None and refused.status == status and words in refused.message, scope


def test_where_the_caller_cannot_be_seen_the_token_is_named(
    connection: tuple[tuple[str, int], tuple[str, int]],
) -> None:
    # A client address with no socket behind it stands for a machine whose table cannot be read.
    client, server = connection
    scope = _scope(((client[0], 1), server))
    refused = local_caller.refusal(scope, "/home/u/.local/share/hippo/http-token")
    assert refused is not None and refused.status == 401
    assert "/home/u/.local/share/hippo/http-token" in refused.message


def test_the_token_file_is_private_kept_and_replaced_when_others_could_read_it(tmp_path: Path) -> None:
    root = str(tmp_path / "hippo")
    made = local_token.ensure(root)
    file = local_token.path(root)
    assert made.startswith(local_token.PREFIX) and stat.S_IMODE(os.stat(file).st_mode) == 0o600
    assert local_token.ensure(root) == made
    os.chmod(file, 0o644)
    again = local_token.ensure(root)
    assert again != made and stat.S_IMODE(os.stat(file).st_mode) == 0o600
    assert local_token.matches(again, again) and not local_token.matches(made, again)
    assert os.listdir(root) == [local_token.FILE_NAME]


def test_a_client_that_closed_its_socket_is_nobody() -> None:
    # A request sent and the socket closed at once leaves an orphan, then a TIME_WAIT entry, which the
    # kernel lists as uid 0: to a daemon run as root, such a client would pass for its owner.
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname()[:2])
        accepted, address = listener.accept()
        with accepted:
            ends = (address[0], address[1]), accepted.getsockname()[:2]
            assert peer.peer_uid(*ends) == os.getuid()
            client.sendall(b"POST /v1/memories HTTP/1.1\r\n\r\n")
            client.close()
            assert accepted.recv(100)
            assert peer.peer_uid(*ends) is None and peer._by_table(*ends) is None  # orphaned
        # The server's end is closed too: the client's is in TIME_WAIT now.
        assert peer.peer_uid(*ends) is None and peer._by_table(*ends) is None
