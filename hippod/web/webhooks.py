"""`POST /v1/connectors/slack/events` and `/github/events` (integrations.md §10).

Each delivery is checked against its signature before anything in it is parsed; once it is, the
answer is 200 whatever happens next (a sender that hears an error retries, forever): what cannot be
read goes to the dead letters, and the rest is applied once (hippod/connectors/deliver.py).
"""

from __future__ import annotations

import logging
import os
import time

from starlette.responses import Response

from hippod.base.errors import HippoError, log_failure
from hippod.connectors import deliver, intake, signatures
from hippod.web import wire
from hippod.web.errors import HttpError
from hippod.web.routing import Call, Op, json_response

log = logging.getLogger("hippod.web")


def _secrets(name: str) -> list[str]:
    current = os.environ.get(name, "").strip()
    if not current:
        raise HttpError(
            503,
            "connector_not_configured",
            f"set {name} in the daemon's environment to accept these webhooks",
        )
    # The previous secret still verifies while a rotation is under way.
    return [current, os.environ.get(f"{name}_PREVIOUS", "").strip()]


def _ack(done: deliver.Ack) -> Response:
    return json_response(
        wire.WebhookAck(ok=True, status=done.status, memory_id=done.memory_id, archived_count=done.archived)
    )


async def _dead(call: Call, source: str, letter: intake.Letter, body: bytes) -> Response:
    kept = {k: v for k, v in call.request.headers.items() if k.startswith(("x-slack", "x-github", "x-hub"))}
    await deliver.dead_letter(call.state, source, letter.tenant, letter.bucket, letter.error, body, kept)
    log.warning("%s webhook: a delivery went to the dead letters (%s)", source, letter.bucket)
    return json_response(wire.WebhookAck(ok=True, status="dlq"))


async def _answer(call: Call, source: str, read: intake.Read, body: bytes) -> Response:
    """The answer to a verified delivery: its handshake, its dead letter, or its plan applied."""
    if isinstance(read, intake.Handshake):
        if read.challenge is None:
            return json_response(wire.Pong(pong=True))
        return json_response(wire.Challenge(challenge=read.challenge))
    if isinstance(read, intake.Letter):
        return await _dead(call, source, read, body)
    try:
        return _ack(await deliver.deliver(call.state, source, read.key, read.event, read.tenant, read.plan))
    except HippoError:
        raise  # a full disk, a corrupt store: an error the sender retries later
    except Exception as exc:
        log_failure(f"{source} webhook", exc)
        return await _dead(call, source, intake.Letter(read.tenant, "ingest_error", type(exc).__name__), body)


async def slack_events(call: Call) -> Response:
    secrets = _secrets("SLACK_SIGNING_SECRET")
    body = await call.raw()
    headers = call.request.headers
    timestamp, signature = headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature")
    if not signatures.slack_valid(secrets, timestamp, signature, body, time.time()):
        raise HttpError(
            401, "invalid_signature", "invalid Slack signature (or a timestamp over 5 minutes old)"
        )
    return await _answer(call, "slack", await intake.slack_delivery(call.state, body), body)


async def github_events(call: Call) -> Response:
    secrets = _secrets("GITHUB_WEBHOOK_SECRET")
    body = await call.raw()
    headers = call.request.headers
    if not signatures.github_valid(secrets, headers.get("x-hub-signature-256"), body):
        raise HttpError(401, "invalid_signature", "invalid GitHub signature")
    event = headers.get("x-github-event") or ""
    delivery = headers.get("x-github-delivery") or ""
    read = await intake.github_delivery(call.state, event, delivery, body)
    return await _answer(call, "github", read, body)


OPS = (
    Op(
        "POST",
        "/v1/connectors/slack/events",
        slack_events,
        "Slack's Events API: signed deliveries become raw memories (503 until SLACK_SIGNING_SECRET is set)",
        role=None,
        raw_body=True,
        ok=(200, wire.WebhookAck),
    ),
    Op(
        "POST",
        "/v1/connectors/github/events",
        github_events,
        "GitHub's webhooks: signed deliveries become raw memories (503 until GITHUB_WEBHOOK_SECRET is set)",
        role=None,
        raw_body=True,
        ok=(200, wire.WebhookAck),
    ),
)
