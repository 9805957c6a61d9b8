"""`POST /v1/connectors/slack/events` and `/github/events` (integrations.md §10).

Each delivery is checked against its signature before anything in it is parsed; once it is, the
answer is 200 whatever happens next (a sender that hears an error retries, forever): what cannot be
read goes to the dead letters, and the rest is applied once (hippod/connectors/deliver.py).
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

from starlette.responses import Response

from hippod.base.errors import HippoError, log_failure
from hippod.connectors import deliver, github, signatures, slack
from hippod.connectors.plans import Malformed, Plan
from hippod.web import wire
from hippod.web.errors import HttpError
from hippod.web.routing import TOO_DEEP, Call, Op, json_response

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


def _parsed(body: bytes) -> tuple[Any, str | None]:
    """The delivery's JSON, or why it has none (the dead letter's error)."""
    try:
        return json.loads(body), None
    except ValueError:
        return None, "invalid JSON"
    except RecursionError:
        return None, TOO_DEEP


def _ack(done: deliver.Ack) -> Response:
    return json_response(
        wire.WebhookAck(ok=True, status=done.status, memory_id=done.memory_id, archived_count=done.archived)
    )


async def _dead(call: Call, source: str, tenant: str, bucket: str, error: str, body: bytes) -> Response:
    kept = {k: v for k, v in call.request.headers.items() if k.startswith(("x-slack", "x-github", "x-hub"))}
    await deliver.dead_letter(call.state, source, tenant, bucket, error, body, kept)
    log.warning("%s webhook: a delivery went to the dead letters (%s)", source, bucket)
    return json_response(wire.WebhookAck(ok=True, status="dlq"))


async def _apply(
    call: Call, source: str, key: str, event: str, tenant: str, plan: Plan, body: bytes
) -> Response:
    try:
        return _ack(await deliver.deliver(call.state, source, key, event, tenant, plan))
    except HippoError:
        raise  # a full disk, a corrupt store: an error the sender retries later
    except Exception as exc:
        log_failure(f"{source} webhook", exc)
        return await _dead(call, source, tenant, "ingest_error", type(exc).__name__, body)


async def slack_events(call: Call) -> Response:
    secrets = _secrets("SLACK_SIGNING_SECRET")
    body = await call.raw()
    headers = call.request.headers
    timestamp, signature = headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature")
    if not signatures.slack_valid(secrets, timestamp, signature, body, time.time()):
        raise HttpError(
            401, "invalid_signature", "invalid Slack signature (or a timestamp over 5 minutes old)"
        )
    env_tenant = deliver.env_tenant()
    payload, error = _parsed(body)
    if error is not None:
        return await _dead(call, "slack", env_tenant, "parse_error", error, body)
    if isinstance(payload, dict) and payload.get("type") == "url_verification":
        return json_response(wire.Challenge(challenge=str(payload.get("challenge", ""))))
    try:
        envelope = slack.envelope(payload)
    except Malformed as exc:
        return await _dead(call, "slack", env_tenant, exc.bucket, exc.error, body)
    tenant = await deliver.tenant_for(call.state, "slack", envelope.team_id)
    if tenant is None:
        error = f"unroutable team_id: {envelope.team_id}"
        return await _dead(call, "slack", deliver.UNROUTABLE, "unroutable", error, body)
    try:
        plan = slack.plan(envelope)
    except Malformed as exc:
        return await _dead(call, "slack", tenant, exc.bucket, exc.error, body)
    return await _apply(call, "slack", envelope.event_id, str(envelope.event["type"]), tenant, plan, body)


async def github_events(call: Call) -> Response:
    secrets = _secrets("GITHUB_WEBHOOK_SECRET")
    body = await call.raw()
    headers = call.request.headers
    if not signatures.github_valid(secrets, headers.get("x-hub-signature-256"), body):
        raise HttpError(401, "invalid_signature", "invalid GitHub signature")
    env_tenant = deliver.env_tenant()
    event = headers.get("x-github-event") or ""
    delivery = headers.get("x-github-delivery") or ""
    if event == "ping":
        return json_response(wire.Pong(pong=True))
    if not delivery or len(delivery) > 128:
        return await _dead(
            call, "github", env_tenant, "parse_error", "missing X-GitHub-Delivery header", body
        )
    payload, error = _parsed(body)
    if error is not None:
        return await _dead(call, "github", env_tenant, "parse_error", error, body)
    if not isinstance(payload, dict):
        return await _dead(call, "github", env_tenant, "parse_error", "not a GitHub webhook envelope", body)
    tenant = await deliver.tenant_for(call.state, "github", github.installation(payload))
    if tenant is None:
        error = f"unroutable: installation_id={github.installation(payload) or '(none)'}"
        return await _dead(call, "github", deliver.UNROUTABLE, "unroutable", error, body)
    try:
        plan = github.plan(event, payload, delivery)
    except Malformed as exc:
        return await _dead(call, "github", tenant, exc.bucket, exc.error, body)
    return await _apply(call, "github", delivery, event, tenant, plan, body)


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
