"""A team server serves API keys alone: no request without one, not from its own machine nor through a
same-host proxy, no local token, and a key's holder mints keys of its own tenant only."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
from e2e.harness import Hippo

from team.support import create_key, start_server

JSON = {"Content-Type": "application/json"}


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        sink.close()
        source.close()


@contextmanager
def tcp_proxy(port: int) -> Iterator[int]:
    """A plain TCP proxy on this machine in front of 127.0.0.1:port, as a same-host reverse proxy
    without X-Forwarded-For looks to the server; the port it listens on."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", port))
            threading.Thread(target=_pipe, args=(client, upstream), daemon=True).start()
            threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        thread.join()
        listener.close()


def test_nothing_is_served_without_a_key_nor_a_key_of_another_tenant_minted(
    hippo: Hippo, pg_dsn: str, tenant: str
) -> None:
    url = start_server(hippo, pg_dsn)  # loopback only, without --allow-remote
    port = int(url.rsplit(":", 1)[1])
    with tcp_proxy(port) as proxied:
        for base in (url, f"http://127.0.0.1:{proxied}"):
            with httpx.Client(base_url=base, headers=JSON) as client:
                for asked in (tenant, "default"):
                    minted = client.post("/v1/auth/keys", json={"tenant": asked, "role": "admin"})
                    assert minted.status_code == 401 and "plaintext" not in minted.text, (base, minted.text)
                assert client.get("/v1/memories", params={"q": "deploy"}).status_code == 401
                assert client.post("/v1/memories", json={"content": "A planted lesson"}).status_code == 401
                forged = client.get(
                    "/v1/memories", params={"q": "x"}, headers={"Authorization": "Bearer hl_x"}
                )
                assert forged.status_code == 401
                assert client.get("/health").status_code == 200
    refused = hippo.ctl("auth", "token")
    assert refused.returncode == 1 and "team server does not serve auth token" in refused.stderr
    admin = create_key(hippo, tenant, role="admin")
    with httpx.Client(base_url=url, headers={**JSON, "Authorization": f"Bearer {admin}"}) as holder:
        other = holder.post("/v1/auth/keys", json={"tenant": tenant + "_b", "role": "admin"})
        assert other.status_code == 403 and "plaintext" not in other.text
        own = holder.post("/v1/auth/keys", json={"role": "member"})
        assert own.status_code == 201 and own.json()["tenantId"] == tenant
    listed = hippo.json("auth", "list", "--all", "--tenant", tenant + "_b")["keys"]
    assert listed == []
