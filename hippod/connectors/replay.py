"""Replaying the webhooks' dead letters (integrations.md §10): each letter read again as the live
route reads a delivery (connectors/intake.py) and applied by the same path (connectors/deliver.py),
which marks it done in the transaction that applies it.

Exactly once: the delivery's key (Slack's event_id, GitHub's X-GitHub-Delivery) is logged with the
delivery, so a second replay, or a live redelivery of the same event before or after, finds it seen
and stores nothing. What the source deleted since, or what was archived or rejected here since, is
not brought back (deliver's `deleted` and `rejected`), and an edit older than the one applied since
changes nothing (`stale`: the letter is done). A letter that still cannot be applied stays,
with its new error and one more attempt.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from hippod.base import clock
from hippod.base.errors import HippoError, log_failure
from hippod.calls.daemon_view import DaemonView
from hippod.connectors import deliver, intake
from hippod.connectors.plans import Ingest, Remove
from hippod.store.sqlite import connectors

log = logging.getLogger("hippod.connectors")


@dataclass(frozen=True, slots=True)
class Replayed:
    """One letter's replay: its status (deliver.Ack's, or `failed`), and for a failure its error."""

    id: int
    status: str
    tenant: str
    retry_count: int
    memory_id: str | None = None
    error: str | None = None


def tenants(tenant: str, owner: bool) -> tuple[str, ...]:
    """Whose letters a caller sees: its tenant's; the daemon's owner also those no tenant was found
    for (a workspace or installation mapped since may route them now)."""
    return (tenant, deliver.UNROUTABLE) if owner else (tenant,)


def _headers(letter: connectors.Letter) -> dict[str, str]:
    try:
        found = json.loads(letter.headers_json)
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


async def _read(state: DaemonView, source: str, letter: connectors.Letter) -> intake.Read:
    if source == "slack":
        return await intake.slack_delivery(state, letter.payload)
    headers = _headers(letter)
    event, delivery = headers.get("x-github-event", ""), headers.get("x-github-delivery", "")
    return await intake.github_delivery(state, event, delivery, letter.payload)


async def _failed(state: DaemonView, letter: connectors.Letter, failed: intake.Letter) -> Replayed:
    store = await deliver.global_store(state)
    now = clock.iso(clock.now())
    async with store.db.transaction() as conn:
        attempts = await connectors.mark_failed_again(
            conn, letter.id, failed.tenant, failed.bucket, failed.error[:500], now
        )
    return Replayed(letter.id, "failed", failed.tenant, attempts, error=failed.error)


async def _would(state: DaemonView, source: str, letter: connectors.Letter, read: intake.Read) -> Replayed:
    """--dry-run: what the letter would become, read without a write."""
    if isinstance(read, intake.Letter):
        return Replayed(letter.id, "failed", read.tenant, letter.retry_count, error=read.error)
    if isinstance(read, intake.Handshake):
        return Replayed(letter.id, "skipped", letter.tenant, letter.retry_count)
    store = await deliver.global_store(state)
    seen = await connectors.logged(store.db.reader, source, read.key)
    if seen is not None:
        return Replayed(letter.id, "duplicate", read.tenant, letter.retry_count, seen.memory_id)
    if await deliver.stale(state, read.tenant, read.plan):
        return Replayed(letter.id, "would_stale", read.tenant, letter.retry_count)
    status = (
        "ingest" if isinstance(read.plan, Ingest) else "archive" if isinstance(read.plan, Remove) else "skip"
    )
    return Replayed(letter.id, f"would_{status}", read.tenant, letter.retry_count)


async def replay_one(state: DaemonView, source: str, letter: connectors.Letter, dry_run: bool) -> Replayed:
    """One letter replayed (or, with `dry_run`, judged)."""
    read = await _read(state, source, letter)
    if dry_run:
        return await _would(state, source, letter, read)
    if isinstance(read, intake.Letter):
        return await _failed(state, letter, read)
    if isinstance(read, intake.Handshake):
        # A handshake is answered, never kept; a letter that reads as one has nothing to apply.
        store = await deliver.global_store(state)
        async with store.db.transaction() as conn:
            await connectors.mark_replayed(conn, letter.id, "skipped", None, clock.iso(clock.now()))
        return Replayed(letter.id, "skipped", letter.tenant, letter.retry_count + 1)
    try:
        ack = await deliver.deliver(state, source, read.key, read.event, read.tenant, read.plan, letter.id)
    except HippoError:
        raise  # a full disk, a corrupt store: the replay stops, the letters stay
    except Exception as exc:
        log_failure(f"{source} dead letter {letter.id}", exc)
        return await _failed(state, letter, intake.Letter(read.tenant, "ingest_error", type(exc).__name__))
    return Replayed(letter.id, ack.status, read.tenant, letter.retry_count + 1, ack.memory_id)


async def replay(
    state: DaemonView, source: str, tenant: str, *, owner: bool, letter_id: int | None, dry_run: bool
) -> list[Replayed]:
    """The letters the caller sees (one, with `letter_id`), oldest first, each replayed once."""
    store = await deliver.global_store(state)
    letters = await connectors.letters_to_replay(store.db.reader, source, tenants(tenant, owner), letter_id)
    if letter_id is not None and not letters:
        raise HippoError(
            "not_found",
            f"no {source} dead letter {letter_id} waiting to be replayed",
            hint=f"hippoctl {source} dlq list",
        )
    done = [await replay_one(state, source, letter, dry_run) for letter in letters]
    if not dry_run and done:
        log.info("%s dead letters replayed: %d", source, len(done))
    return done
