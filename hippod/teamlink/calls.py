"""The calls a laptop makes to its team server's HTTP API, with the standard library alone (a
laptop's hippod needs no HTTP client package). Each blocks: callers run them in a thread."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

TIMEOUT = 10.0


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: its status and body; status 0 when the server could not be reached."""

    status: int
    body: str

    @property
    def reached(self) -> bool:
        return self.status != 0

    @property
    def retry(self) -> bool:
        """Worth sending again later: not reached, overloaded, or a fault on the server's side."""
        return self.status == 0 or self.status in (408, 429) or self.status >= 500

    def message(self) -> str:
        """The server's error message, else the body's start."""
        try:
            data = json.loads(self.body)
        except ValueError:
            return self.body[:200]
        if isinstance(data, dict):
            error = data.get("error")
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                return str(error["message"])
            if isinstance(data.get("message"), str):
                return str(data["message"])
        return self.body[:200]


def url_problem(url: str) -> str | None:
    """Why `url` is not a team server's base URL, or None."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"{url!r} is not an http:// or https:// URL"
    if parts.query or parts.fragment:
        return f"{url!r}: give the server's base URL, without ? or #"
    return None


def _call(
    url: str,
    method: str,
    path: str,
    key: str | None,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    request = urllib.request.Request(url.rstrip("/") + path, data=body, method=method)
    request.add_header("Accept", "application/json")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    if key is not None:
        request.add_header("Authorization", f"Bearer {key}")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return Answer(response.status, response.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        return Answer(exc.code, exc.read().decode("utf-8", "replace"))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Answer(0, str(reason))


def get(url: str, key: str, path: str) -> Answer:
    return _call(url, "GET", path, key)


def health(url: str) -> Answer:
    return _call(url, "GET", "/health", None)


def check_key(url: str, key: str) -> Answer:
    """A read any member may make: 200 when the server takes the key."""
    return _call(url, "GET", "/v1/memories?" + urlencode({"q": "team", "limit": 1}), key)


def post_memory(url: str, key: str, body: bytes, request_key: str) -> Answer:
    """POST /v1/memories with the write's Idempotency-Key: sent twice, stored once."""
    return _call(url, "POST", "/v1/memories", key, body, {"Idempotency-Key": request_key})


def post_marks(url: str, key: str, body: bytes, batch_key: str) -> Answer:
    """POST /v1/team/marks: one batch of retrievals and outcome marks, applied once under its key."""
    return _call(url, "POST", "/v1/team/marks", key, body, {"Idempotency-Key": batch_key})
