"""What a webhook delivery asks of the store, as plain data: the pure parsers return one of these."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from hippoctl.protocol import validate

_SLACK_TS = re.compile(r"(\d{1,12})(?:\.(\d{1,6}))?", re.ASCII)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Receipt:
    """A raw memory to store: the message's text with where it came from."""

    content: str
    scope: str
    owner: str
    artifact_ref: str
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Ingest:
    receipt: Receipt
    edit: bool = False  # the source changed the item: its earlier receipts are archived first
    # An edit's time at the source (µs since the epoch; None when it gave none): an edit no newer
    # than the one stored is stale and changes nothing.
    edited: int | None = None


@dataclass(frozen=True, slots=True)
class Remove:
    """The source deleted the item (or, not `deleted`, emptied it): archive its receipts (metadata
    kept, text gone); a deleted item is never stored again."""

    artifact_ref: str
    reason: str
    deleted: bool = True
    edited: int | None = None  # an emptying edit's time at the source, as Ingest's


@dataclass(frozen=True, slots=True)
class Skip:
    """Nothing to store (a bot's message, an action without text); the delivery is still logged."""

    reason: str


Plan = Ingest | Remove | Skip


class Malformed(Exception):
    """A delivery that cannot be read: it goes to the dead letters under `bucket`."""

    def __init__(self, bucket: str, error: str) -> None:
        super().__init__(error)
        self.bucket = bucket
        self.error = error


def tags(*given: str | None) -> list[str]:
    """Tags within the store's limits: the empty ones dropped, each cut to the longest a tag may be."""
    cut = [t[: validate.MAX_TAG_CHARS] for t in given if t]
    return validate.clean_tags(cut)[: validate.MAX_TAGS]


def text_of(*parts: object) -> str:
    """The non-empty parts, trimmed, a blank line apart."""
    return "\n\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())


def slack_time(ts: object) -> int | None:
    """A Slack timestamp ("1700000000.000100") in microseconds since the epoch; None if it is none."""
    found = _SLACK_TS.fullmatch(ts) if isinstance(ts, str) else None
    if found is None:
        return None
    return int(found[1]) * 1_000_000 + int((found[2] or "").ljust(6, "0"))


def iso_time(value: object) -> int | None:
    """An ISO 8601 time (GitHub's "2026-11-30T10:00:00Z") in microseconds since the epoch, a time
    without a zone read as UTC; None if it is none."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(microseconds=1)
