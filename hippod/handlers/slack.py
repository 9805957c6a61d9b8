"""`slack backfill` and the webhooks' dead letters (integrations.md §10).

The backfill pages Slack's `conversations.history` (SLACK_API_URL, https://slack.com/api by default,
with SLACK_BOT_TOKEN) and applies each message as the webhook would, so a message that reached hippod
both ways is kept once; its cursor is saved after every page, so a run cut short resumes.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import BackfillReply, DeadLetter, DeadLettersReply
from hippoctl.protocol.wording import plural
from hippod import clock
from hippod.connectors import deliver
from hippod.connectors import slack as slack_plans
from hippod.errors import HippoError
from hippod.request import RequestContext
from hippod.store import connectors

PAGE = 200
RETRIES = 3
TIMEOUT_S = 30.0
MAX_PAGES = 10_000


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


async def _call(method: str, params: dict[str, str], token: str) -> dict[str, Any]:
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


def _epoch(since: str | None) -> float:
    if since is None:
        return 0.0
    try:
        return clock.parse_iso(since).timestamp()
    except ValueError:
        raise HippoError("usage", f"--since {since!r} is not an ISO date or time") from None


async def slack_backfill(ctx: RequestContext, body: m.SlackBackfill) -> tuple[BackfillReply, str]:
    token = body.token or os.environ.get("SLACK_BOT_TOKEN", "").strip()
    if not token:
        raise HippoError(
            "connector_not_configured",
            "SLACK_BOT_TOKEN is not set: a bot token with the channels:history scope is needed",
        )
    since = _epoch(body.since)
    store = await deliver.global_store(ctx.state)
    tenant = ctx.tenant
    cursor_ts = await connectors.cursor(store.db.reader, tenant, body.channel)
    oldest = max(since, float(cursor_ts) if cursor_ts else 0.0)
    # Private unless Slack says otherwise: a backfilled message is hidden from recall when unsure.
    try:
        info = await _call("conversations.info", {"channel": body.channel}, token)
        private = info.get("channel", {}).get("is_private") is not False
    except HippoError:
        private = True
    team_default = os.environ.get("SLACK_TEAM_ID", "").strip() or "T_UNKNOWN"
    counts = {"ingested": 0, "duplicate": 0, "skipped": 0}
    pages, latest, next_cursor = 0, cursor_ts, ""
    while pages < MAX_PAGES:
        params = {"channel": body.channel, "limit": str(PAGE)}
        if next_cursor:
            params["cursor"] = next_cursor
        elif oldest:
            params["oldest"] = f"{oldest:.6f}"
        page = await _call("conversations.history", params, token)
        pages += 1
        messages = [msg for msg in page.get("messages") or [] if isinstance(msg, dict)]
        team = next((str(msg["team"]) for msg in messages if isinstance(msg.get("team"), str)), team_default)
        for key, plan in slack_plans.history_plans(team, body.channel, private, messages):
            done = await deliver.deliver(ctx.state, "slack", key, "message", tenant, plan)
            counts[done.status if done.status in counts else "skipped"] += 1
        stamps = [str(msg["ts"]) for msg in messages if isinstance(msg.get("ts"), str)]
        if stamps:
            newest = max(stamps, key=float)
            if latest is None or float(newest) > float(latest):
                latest = newest
                async with store.db.transaction() as conn:
                    await connectors.set_cursor(conn, tenant, body.channel, latest, clock.iso(clock.now()))
        await ctx.say(f"page {pages}: {plural(counts['ingested'], 'new message')} so far", "err")
        next_cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
        if not next_cursor:
            break
    reply = BackfillReply(
        channel=body.channel,
        pages=pages,
        ingested=counts["ingested"],
        duplicates=counts["duplicate"],
        skipped=counts["skipped"],
        latest_ts=latest,
    )
    text = f"backfill {body.channel}: {plural(reply.ingested, 'new message')} across {plural(pages, 'page')}"
    return reply, text


async def dead_letters(ctx: RequestContext, body: m.DeadLetters) -> tuple[DeadLettersReply, str]:
    if body.source not in ("slack", "github"):
        raise HippoError("usage", "the source is slack or github")
    if not 1 <= body.limit <= 10_000:
        raise HippoError("usage", "the limit is 1 to 10000")
    store = await deliver.global_store(ctx.state)
    found = await connectors.dead_letters(store.db.reader, body.source, ctx.tenant, body.limit)
    letters = [
        DeadLetter(
            id=d.id,
            source=d.source,
            tenant=d.tenant,
            received_at=d.received_at,
            bucket=d.bucket,
            error=d.error,
            retry_count=d.retry_count,
        )
        for d in found
    ]
    text = "\n".join(f"{d.id}\t{d.received_at}\t{d.bucket}\t{d.error}" for d in letters)
    return DeadLettersReply(source=body.source, letters=letters), text or f"No {body.source} dead letters."
