"""The content digest that tombstones and duplicate checks compare (memory-model.md §12)."""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Collection


def _is_trailing(char: str) -> bool:
    return char.isspace() or unicodedata.category(char).startswith("P")


def normalize(content: str) -> str:
    """Format characters (Unicode category Cf: zero-width spaces, soft hyphens, bidi marks) removed,
    NFKC, lowercase, whitespace collapsed, trailing punctuation trimmed.

    A text made only of punctuation keeps it, so "..." and "?!" stay two values.
    """
    # ASCII holds no format characters, and most texts are ASCII.
    kept = content if content.isascii() else "".join(c for c in content if unicodedata.category(c) != "Cf")
    collapsed = " ".join(unicodedata.normalize("NFKC", kept).lower().split())
    end = len(collapsed)
    while end and _is_trailing(collapsed[end - 1]):
        end -= 1
    return collapsed[:end] if end else collapsed


def legacy_normalize(content: str) -> str:
    """The normalisation of schema 8 and before (NFC, lowercase, whitespace collapsed), which the
    tombstones written then were made from."""
    return " ".join(unicodedata.normalize("NFC", content).lower().split())


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def content_digest(content: str) -> str:
    """sha256 hex of the normalised content."""
    return _sha(normalize(content))


def digests(content: str) -> tuple[str, str]:
    """(digest, legacy digest): a tombstone matches a text when it holds either one.

    Tombstones keep no text, so one written before the current normalisation can only be matched
    by digesting the incoming text the old way as well.
    """
    return content_digest(content), _sha(legacy_normalize(content))


def refused(content: str, tombstones: Collection[str]) -> bool:
    """True when the text's value is among these tombstoned digests."""
    return any(d in tombstones for d in digests(content))
