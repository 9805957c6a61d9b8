"""The daemon's notion of "now", which HIPPO_FAKE_NOW can fix for tests."""

from __future__ import annotations

import os
from datetime import UTC, datetime

_fake: datetime | None = None


def parse_iso(value: str) -> datetime:
    """Parse an ISO-8601 instant ("Z" allowed); naive values are taken as UTC."""
    parsed = datetime.fromisoformat(value.strip())
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def load_fake_now() -> None:
    """Read HIPPO_FAKE_NOW once, at daemon start (memory-model.md §5)."""
    global _fake
    value = os.environ.get("HIPPO_FAKE_NOW", "").strip()
    _fake = parse_iso(value) if value else None


def set_fake_now(value: datetime | None) -> None:
    """Fix (or release) the clock; for tests that run code in-process."""
    global _fake
    _fake = value


def now() -> datetime:
    """The current instant in UTC."""
    return _fake if _fake is not None else datetime.now(UTC)


def iso(moment: datetime) -> str:
    """ISO-8601 UTC with milliseconds and a "Z", the format of every stored timestamp."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def days_between(earlier: str, later: datetime) -> float:
    """Days from a stored timestamp to `later`, never negative."""
    return max(0.0, (later - parse_iso(earlier)).total_seconds() / 86400.0)
