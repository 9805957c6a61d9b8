"""A verified webhook delivery's bytes read into what it asks (integrations.md §10): a handshake to
answer, a delivery to apply (its key, event, routed tenant and plan), or a dead letter (its bucket and
error). The live webhook routes and the dead letters' replay read deliveries here, the same way."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hippod.calls.daemon_view import DaemonView
from hippod.connectors import deliver, github, slack
from hippod.connectors.plans import Malformed, Plan

TOO_DEEP = "the body is nested too deep"
MAX_DELIVERY_ID = 128


@dataclass(frozen=True, slots=True)
class Delivery:
    """A delivery to apply once, keyed by the source's event id or delivery id."""

    key: str
    event: str
    tenant: str
    plan: Plan


@dataclass(frozen=True, slots=True)
class Letter:
    """A delivery that cannot be applied: it goes (or stays) in the dead letters."""

    tenant: str
    bucket: str
    error: str


@dataclass(frozen=True, slots=True)
class Handshake:
    """Slack's url_verification (its challenge echoed) or GitHub's ping (challenge None)."""

    challenge: str | None


Read = Delivery | Letter | Handshake


def _parsed(body: bytes) -> tuple[Any, str | None]:
    """The delivery's JSON, or why it has none (the dead letter's error)."""
    try:
        return json.loads(body), None
    except ValueError:
        return None, "invalid JSON"
    except RecursionError:
        return None, TOO_DEEP


async def slack_delivery(state: DaemonView, body: bytes) -> Read:
    """What a Slack Events API delivery asks."""
    env_tenant = deliver.env_tenant()
    payload, error = _parsed(body)
    if error is not None:
        return Letter(env_tenant, "parse_error", error)
    if isinstance(payload, dict) and payload.get("type") == "url_verification":
        return Handshake(str(payload.get("challenge", "")))
    try:
        envelope = slack.envelope(payload)
    except Malformed as exc:
        return Letter(env_tenant, exc.bucket, exc.error)
    tenant = await deliver.tenant_for(state, "slack", envelope.team_id)
    if tenant is None:
        return Letter(deliver.UNROUTABLE, "unroutable", f"unroutable team_id: {envelope.team_id}")
    try:
        plan = slack.plan(envelope)
    except Malformed as exc:
        return Letter(tenant, exc.bucket, exc.error)
    return Delivery(envelope.event_id, str(envelope.event["type"]), tenant, plan)


async def github_delivery(state: DaemonView, event: str, delivery: str, body: bytes) -> Read:
    """What a GitHub webhook delivery asks, by its X-GitHub-Event and X-GitHub-Delivery headers."""
    env_tenant = deliver.env_tenant()
    if event == "ping":
        return Handshake(None)
    if not delivery or len(delivery) > MAX_DELIVERY_ID:
        return Letter(env_tenant, "parse_error", "missing X-GitHub-Delivery header")
    payload, error = _parsed(body)
    if error is not None:
        return Letter(env_tenant, "parse_error", error)
    if not isinstance(payload, dict):
        return Letter(env_tenant, "parse_error", "not a GitHub webhook envelope")
    installation = github.installation(payload)
    tenant = await deliver.tenant_for(state, "github", installation)
    if tenant is None:
        error = f"unroutable: installation_id={installation or '(none)'}"
        return Letter(deliver.UNROUTABLE, "unroutable", error)
    try:
        plan = github.plan(event, payload, delivery)
    except Malformed as exc:
        return Letter(tenant, exc.bucket, exc.error)
    return Delivery(delivery, event, tenant, plan)
