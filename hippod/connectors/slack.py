"""Slack's Events API deliveries as plans (integrations.md §10): channel messages become raw memories;
edits replace them, deletions archive them; bot and system messages are skipped."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hippod.connectors.plans import (
    Ingest,
    Malformed,
    Plan,
    Receipt,
    Remove,
    Skip,
    slack_time,
    tags,
    text_of,
)

# Subtypes that carry a person's message; every other subtype (joins, topics, bots...) is skipped.
MESSAGE_SUBTYPES = frozenset({None, "thread_broadcast", "file_share", "me_message"})


@dataclass(frozen=True, slots=True)
class Envelope:
    """An `event_callback`: whose workspace, which delivery, and the event."""

    team_id: str
    event_id: str
    event: dict[str, Any]


def envelope(payload: object) -> Envelope:
    if not isinstance(payload, dict) or payload.get("type") != "event_callback":
        raise Malformed("parse_error", "not an event_callback envelope")
    team, event_id, event = payload.get("team_id"), payload.get("event_id"), payload.get("event")
    if not isinstance(team, str) or not isinstance(event_id, str) or not isinstance(event, dict):
        raise Malformed("parse_error", "an event_callback needs team_id, event_id and event")
    if not isinstance(event.get("type"), str):
        raise Malformed("parse_error", "the event has no type")
    return Envelope(team, event_id, event)


def ref(team: str, channel: str, ts: str) -> str:
    return f"slack://{team}/{channel}/{ts}"


def scope(channel: str, channel_type: object) -> str:
    """Public only for a public channel; anything else (a private channel, a DM, unknown) is private."""
    return f"slack:{'public' if channel_type == 'channel' else 'private'}:{channel}"


def _is_bot(message: dict[str, Any]) -> bool:
    return message.get("subtype") == "bot_message" or (
        bool(message.get("bot_id")) and not message.get("user")
    )


def _receipt(team: str, channel: str, channel_type: object, message: dict[str, Any]) -> Receipt | None:
    text, ts, user = message.get("text"), message.get("ts"), message.get("user")
    if not isinstance(ts, str) or not isinstance(user, str):
        raise Malformed("parse_error", "a message needs ts and user")
    content = text_of(text)
    if not content:
        return None
    thread = message.get("thread_ts")
    return Receipt(
        content=content,
        scope=scope(channel, channel_type),
        owner=f"user:{user}",
        artifact_ref=ref(team, channel, ts),
        tags=tags(
            "source:slack",
            f"channel:{channel}",
            f"user:{user}",
            f"thread:{thread}" if isinstance(thread, str) and thread != ts else None,
        ),
    )


def plan(env: Envelope) -> Plan:
    """What one event asks of the store."""
    event = env.event
    if event["type"] != "message":
        return Skip(f"event type {event['type']} is not ingested")
    channel = event.get("channel")
    if not isinstance(channel, str) or not channel:
        raise Malformed("parse_error", "a message event needs a channel")
    subtype = event.get("subtype")
    if subtype == "message_deleted":
        deleted = event.get("deleted_ts") or (event.get("previous_message") or {}).get("ts")
        if not isinstance(deleted, str):
            raise Malformed("parse_error", "message_deleted without deleted_ts")
        return Remove(ref(env.team_id, channel, deleted), f"deleted in Slack ({env.event_id})")
    if subtype == "message_changed":
        message = event.get("message")
        if not isinstance(message, dict):
            raise Malformed("parse_error", "message_changed without message")
        if _is_bot(message):
            return Skip("a bot's message")
        edited = edit_time(event, message)
        receipt = _receipt(env.team_id, channel, event.get("channel_type"), message)
        if receipt is None:
            emptied = f"emptied in Slack ({env.event_id})"
            return Remove(receipt_ref(env.team_id, channel, message), emptied, deleted=False, edited=edited)
        return Ingest(receipt, edit=True, edited=edited)
    if _is_bot(event):
        return Skip("a bot's message")
    if subtype not in MESSAGE_SUBTYPES:
        return Skip(f"message subtype {subtype} is not ingested")
    receipt = _receipt(env.team_id, channel, event.get("channel_type"), event)
    return Skip("a message without text") if receipt is None else Ingest(receipt)


def edit_time(event: dict[str, Any], message: dict[str, Any]) -> int | None:
    """When a message_changed edit was made: the message's `edited.ts`, else the event's own ts."""
    edited = message.get("edited")
    stamp = edited.get("ts") if isinstance(edited, dict) else None
    for given in (stamp, event.get("ts"), event.get("event_ts")):
        found = slack_time(given)
        if found is not None:
            return found
    return None


def receipt_ref(team: str, channel: str, message: dict[str, Any]) -> str:
    return ref(team, channel, str(message.get("ts")))


def history_plans(team: str, channel: str, private: bool, messages: list[Any]) -> list[tuple[str, Plan]]:
    """conversations.history messages as (delivery key, plan): the backfill's deliveries."""
    found: list[tuple[str, Plan]] = []
    channel_type = "group" if private else "channel"
    for message in messages:
        if (
            not isinstance(message, dict)
            or message.get("type") != "message"
            or not isinstance(message.get("ts"), str)
        ):
            continue
        key = f"backfill:{team}:{channel}:{message['ts']}"
        if _is_bot(message) or message.get("subtype") not in MESSAGE_SUBTYPES:
            found.append((key, Skip("not a person's message")))
            continue
        try:
            receipt = _receipt(team, channel, channel_type, message)
        except Malformed:
            continue
        found.append((key, Skip("a message without text") if receipt is None else Ingest(receipt)))
    return found
