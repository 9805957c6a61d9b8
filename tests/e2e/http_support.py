"""The HTTP API under test: a real daemon with its listener opened by `hippoctl serve`, reached by
the original's SDK (hippo_memory) or by httpx."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from e2e.harness import Hippo


@dataclass(frozen=True)
class Api:
    """An HTTP API under test and how to call it: with `key`, or as the daemon's own user without one."""

    url: str
    key: str | None

    @property
    def headers(self) -> dict[str, str]:
        """What the SDK sends on every call: JSON, and the key when there is one."""
        headers = {"Content-Type": "application/json"}
        if self.key is not None:
            headers["Authorization"] = f"Bearer {self.key}"
        return headers


def serve(hippo: Hippo, *args: str, rps: str | None = "0", **env: str) -> str:
    """Start the daemon (the rate limit off unless `rps`), open its listener on a free port; its URL."""
    if rps is not None:
        hippo.env["HIPPO_V1_RPS"] = rps
    hippo.env.update(env)
    hippo.start()
    reply = hippo.json("serve", "--port", "0", *args)
    assert reply["running"] is True, reply
    return str(reply["url"])


def create_key(hippo: Hippo, *, tenant: str = "default", role: str = "member", label: str = "test") -> str:
    """A new key's plaintext, made with the CLI."""
    made = hippo.json("auth", "create", "--tenant", tenant, "--role", role, "--label", label)
    return str(made["plaintext"])


def slack_headers(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """The headers Slack signs a delivery with (its "verifying requests from Slack" page)."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
    }


def github_headers(secret: str, body: bytes, event: str, delivery: str) -> dict[str, str]:
    """The headers GitHub sends a delivery with (docs.github.com, validating webhook deliveries)."""
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": f"sha256={digest}",
    }


def body(data: Any) -> bytes:
    return json.dumps(data).encode()
