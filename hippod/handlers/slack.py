"""`slack backfill` (integrations.md §10).

The backfill pages Slack's `conversations.history` (SLACK_API_URL, https://slack.com/api by default,
with SLACK_BOT_TOKEN) and applies each message as the webhook would, so a message that reached hippod
both ways is kept once; its cursor is saved after every page, so a run cut short resumes.
"""

from __future__ import annotations

import os

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import BackfillReply
from hippoctl.protocol.wording import plural
from hippod.base import clock
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.connectors import deliver, slack_api
from hippod.connectors import slack as slack_plans
from hippod.store.sqlite import connectors

PAGE = 200
MAX_PAGES = 10_000


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
        info = await slack_api.call("conversations.info", {"channel": body.channel}, token)
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
        page = await slack_api.call("conversations.history", params, token)
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
