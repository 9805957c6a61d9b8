"""What every HTTP request passes before routing (integrations.md §9.6): no `%2F` in the path, a body
of at most 1 MiB, and a token bucket per remote address on `/v1/*`; for a read-only listener (the
dashboard, §13), nothing but GET and HEAD, and only under a loopback host name."""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from hippod.web.errors import error_body

MAX_BODY = 1024 * 1024
DEFAULT_RPS = 20.0
_MAX_BUCKETS = 10_000
READ_METHODS = ("GET", "HEAD")
LOOPBACK_HOSTS = (b"127.0.0.1", b"localhost", b"[::1]")


class TokenBuckets:
    """One bucket per remote address: `rate` tokens a second, up to a burst of twice that."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.burst = 2 * rate
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, key: str, now: float) -> bool:
        tokens, then = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        allowed = tokens >= 1.0
        self._buckets[key] = (tokens - 1.0 if allowed else tokens, now)
        if len(self._buckets) > _MAX_BUCKETS:
            self._buckets.popitem(last=False)
        return allowed


def rate_from_env() -> float:
    """HIPPO_V1_RPS, else 20 a second; 0 or less turns the limit off."""
    try:
        return float(os.environ.get("HIPPO_V1_RPS", DEFAULT_RPS))
    except ValueError:
        return DEFAULT_RPS


async def _refuse(send: Send, status: int, code: str, message: str, headers: list[Any] | None = None) -> None:
    body = error_body(code, message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def loopback_host(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether the Host header names this machine: a page of another site that resolves its own name
    to 127.0.0.1 (DNS rebinding) still sends that name, and is refused."""
    for name, value in headers:
        if name == b"host":
            host = value.lower()
            # An IPv6 literal keeps its brackets; a name or IPv4 address drops its port.
            name_only = host[: host.find(b"]") + 1] if host.startswith(b"[") else host.split(b":", 1)[0]
            return name_only in LOOPBACK_HOSTS
    return False


class Guard:
    """ASGI middleware applying the checks above before the app sees the request."""

    def __init__(self, app: ASGIApp, rate: float, *, read_only: bool = False) -> None:
        self.app = app
        self.buckets = TokenBuckets(rate) if rate > 0 else None
        self.read_only = read_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.read_only:
            if scope["method"] not in READ_METHODS:
                message = f"{scope['path']} is read-only: it answers GET and HEAD"
                await _refuse(send, 405, "method_not_allowed", message, [(b"allow", b"GET, HEAD")])
                return
            if not loopback_host(scope["headers"]):
                await _refuse(send, 403, "forbidden", "answered only under a loopback host name")
                return
        raw_path = scope.get("raw_path") or scope["path"].encode()
        if b"%2f" in raw_path.split(b"?", 1)[0].lower():
            await _refuse(send, 400, "bad_request", "an encoded slash (%2F) is not allowed in the path")
            return
        if self.buckets is not None and scope["path"].startswith("/v1/"):
            client = scope.get("client")
            if not self.buckets.take(client[0] if client else "", time.monotonic()):
                await _refuse(
                    send,
                    429,
                    "rate_limited",
                    "too many requests; retry in a second",
                    [(b"retry-after", b"1")],
                )
                return
        for name, value in scope["headers"]:
            if name == b"content-length":
                if not value.isdigit():
                    await _refuse(send, 400, "bad_request", "Content-Length is not a number")
                    return
                if int(value) > MAX_BODY:
                    await _refuse(send, 413, "payload_too_large", "the request body is over 1 MiB")
                    return
        await self.app(scope, receive, send)
