"""What a webhook delivery asks of the store, as plain data: the pure parsers return one of these."""

from __future__ import annotations

from dataclasses import dataclass, field

from hippoctl.protocol import validate


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


@dataclass(frozen=True, slots=True)
class Remove:
    """The source deleted the item (or, not `deleted`, emptied it): archive its receipts (metadata
    kept, text gone); a deleted item is never stored again."""

    artifact_ref: str
    reason: str
    deleted: bool = True


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
