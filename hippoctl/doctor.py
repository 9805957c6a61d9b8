"""`doctor` and `support-bundle`: the client's half (integrations.md §12). Skeleton."""

from __future__ import annotations

from hippoctl.argcheck import UsageError


def run(*, cwd: str, global_store: bool, spawn: bool, as_json: bool) -> int:
    """Print every check (client-side ones even when the daemon is down); 1 when any fails."""
    raise UsageError("doctor is not available yet")


def bundle(*, cwd: str, global_store: bool, spawn: bool, out: str | None, include_logs: bool) -> int:
    """Write the redacted support bundle; returns the exit code."""
    raise UsageError("support-bundle is not available yet")
