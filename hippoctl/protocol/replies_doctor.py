"""Replies of `doctor` and `support-bundle` (integrations.md §12)."""

from __future__ import annotations

from typing import Any

import msgspec

OK, WARN, FAIL = "ok", "warn", "fail"
# A check doctor could not run (the daemon runs it, and it is down): its message says why.
SKIP = "skip"

# The checks the daemon runs, in the order it runs them: what doctor names as skipped when the
# daemon is down. The project store is checked only where there is one.
DAEMON_CHECKS = (
    "Service",
    "Global store",
    "Project store",
    "Sleep",
    "Daily run",
    "Workspaces",
    "Watch roots",
    "Claude Code",
    "Codex",
    "Codex trust",
    "OpenCode",
    "Blocks",
    "Spool",
    "Config",
    "Embeddings",
    "Network",
)


class Check(msgspec.Struct, omit_defaults=True):
    """One doctor check: status is ok, warn, fail or skip; fix is the command that mends a problem."""

    name: str
    status: str
    message: str
    fix: str | None = None


class DoctorReply(msgspec.Struct):
    """The daemon's half of `doctor`: its checks, in the order they are printed."""

    checks: list[Check]


class StoreCounts(msgspec.Struct):
    """How much a store holds, for a support bundle: counts only, never text."""

    path: str
    kind: str  # global or project
    error: str | None = None  # why the counts are missing (no database, cannot open)
    schema: int | None = None
    memories: int = 0
    layers: dict[str, int] = msgspec.field(default_factory=dict)
    pinned: int = 0
    dormant: int = 0
    conflicts_open: int = 0
    conflicts_total: int = 0


class SupportBundleReply(msgspec.Struct):
    """The daemon's facts for a support bundle: versions, redacted settings, store counts, its log folder."""

    version: str
    protocol: int
    min_protocol: int
    pid: int
    started_at: str
    python: str
    platform: str
    home: str
    socket: str
    log_dir: str
    # daemon.json and each store's config.json over their defaults, secret-looking values masked.
    config: dict[str, Any]
    stores: list[StoreCounts]
