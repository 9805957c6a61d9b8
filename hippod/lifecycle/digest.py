"""The content digest that tombstones and duplicate checks compare (memory-model.md §12)."""

from __future__ import annotations

import hashlib
import unicodedata


def normalize(content: str) -> str:
    """NFC, lowercase, whitespace collapsed, trimmed."""
    return " ".join(unicodedata.normalize("NFC", content).lower().split())


def content_digest(content: str) -> str:
    """sha256 hex of the normalised content."""
    return hashlib.sha256(normalize(content).encode()).hexdigest()
