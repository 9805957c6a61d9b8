"""Whether a request without an API key comes from the user who owns the daemon, and not from a web
page: what the HTTP API's keyless path and the dashboard's data both require.

Loopback alone proves nothing: every user of the machine, a same-host proxy, and any web page the
user visits (a cross-site "simple" request, or DNS rebinding through a name of the attacker's own
that resolves to 127.0.0.1) can all reach a loopback port. So a request without a key must:
- name this machine in its Host header (a rebound page still sends its own name);
- carry no Origin but the listener's own, and no `Sec-Fetch-Site` but same-origin or none (a page
  of another site always sends one of them from a browser);
- for POST, send `Content-Type: application/json`, which a browser cannot send to another site
  without a preflight that this API never grants;
- come from a socket of the daemon's own uid (web/peer.py), or, where that cannot be seen, carry
  the local token instead of going keyless.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import Scope

from hippoctl.protocol.ownership import owner_name
from hippod.web import peer
from hippod.web.errors import HttpError
from hippod.web.guard import LOOPBACK_HOSTS, loopback_host

_SAME_SITE_FETCH = ("same-origin", "none")


def _own_origin(origin: str, scope: Scope) -> bool:
    """Whether `origin` is this listener's own: http, a loopback name, the port it listens on."""
    server = scope.get("server")
    if server is None or not origin.startswith("http://"):
        return False
    host, _, port = origin[len("http://") :].rpartition(":")
    return host.lower().encode() in LOOPBACK_HOSTS and port == str(server[1])


def _json_body(headers: Headers) -> bool:
    """Whether the request says its body is JSON (application/json or application/*+json)."""
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def refusal(scope: Scope, token_file: str) -> HttpError | None:
    """Why this request may not be served as the local user without a key, or None when it may.
    `token_file` is named in the answer where the local token is the way in."""
    headers = Headers(scope=scope)
    if not loopback_host(scope["headers"]):
        return HttpError(
            403,
            "forbidden",
            f"Host {headers.get('host', '')!r} is not this machine: without a key, ask for 127.0.0.1, "
            "localhost or [::1]",
        )
    origin = headers.get("origin")
    if origin is not None and not _own_origin(origin, scope):
        return HttpError(403, "forbidden", f"a request from a web page ({origin}) needs an API key")
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site.lower() not in _SAME_SITE_FETCH:
        return HttpError(403, "forbidden", "a request from another site's page needs an API key")
    if scope["method"] == "POST" and not _json_body(headers):
        return HttpError(
            415,
            "unsupported_media_type",
            "a request without an API key must send Content-Type: application/json",
        )
    client, server = scope.get("client"), scope.get("server")
    uid = peer.peer_uid(tuple(client), tuple(server)) if client and server else None
    if uid is None:
        return HttpError(
            401,
            "unauthorized",
            "this machine cannot tell which user is calling: send an API key or the local token "
            f"(Authorization: Bearer <the contents of {token_file}>)",
            {"WWW-Authenticate": "Bearer"},
        )
    if uid != peer.own_uid():
        return HttpError(
            401,
            "unauthorized",
            f"without a key only {owner_name(peer.own_uid())} is served; "
            f"this request comes from {owner_name(uid)}",
            {"WWW-Authenticate": "Bearer"},
        )
    return None
