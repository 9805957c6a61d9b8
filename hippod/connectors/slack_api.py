"""The Slack Web API as `slack backfill` reads it: SLACK_API_URL (https://slack.com/api by default),
a bot token, and Slack's rate limits waited out. The only place hippod calls Slack."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from hippod.base.errors import HippoError

RETRIES = 3
TIMEOUT_S = 30.0


def api_url(env: Mapping[str, str] = os.environ) -> str:
    """The Slack Web API's base URL: SLACK_API_URL in `env` (the daemon's), else Slack's own."""
    return env.get("SLACK_API_URL", "").rstrip("/") or "https://slack.com/api"


def _get(method: str, params: dict[str, str], token: str) -> tuple[int, dict[str, Any], float | None]:
    """One Web API call: (status, body, Retry-After seconds)."""
    url = f"{api_url()}/{method}?{urllib.parse.urlencode(params)}"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return response.status, json.loads(response.read() or b"{}"), None
    except urllib.error.HTTPError as exc:
        retry = exc.headers.get("Retry-After")
        return exc.code, {}, float(retry) if retry and retry.isdigit() else None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise HippoError(
            "slack_unreachable", f"cannot reach the Slack Web API at {api_url()}: {exc}"
        ) from None


async def call(method: str, params: dict[str, str], token: str) -> dict[str, Any]:
    """A Web API call, waiting out a rate limit (Retry-After, else 1, 2, 4 s) up to three times."""
    for attempt in range(RETRIES + 1):
        status, body, retry = await asyncio.to_thread(_get, method, params, token)
        if status == 429 and attempt < RETRIES:
            await asyncio.sleep(retry if retry is not None else 2.0**attempt)
            continue
        if status != 200:
            raise HippoError("slack_error", f"slack {method}: HTTP {status}")
        if body.get("ok") is not True:
            raise HippoError("slack_error", f"slack {method}: {body.get('error') or 'not ok'}")
        return body
    raise HippoError("slack_error", f"slack {method}: still rate-limited after {RETRIES} retries")
