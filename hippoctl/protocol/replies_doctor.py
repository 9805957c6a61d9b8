"""Replies of `doctor` and `support-bundle` (integrations.md §12)."""

from __future__ import annotations

from typing import Any

import msgspec

OK, WARN, FAIL = "ok", "warn", "fail"
# A check doctor could not run (the daemon runs it, and it is down): its message says why.
SKIP = "skip"

# The checks that need the daemon, in the order doctor prints them: what it names as skipped when
# the daemon is down. The project store is checked only where there is one; the client runs the
# Hook commands check, on the commands the daemon lists.
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
    "Hook commands",
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


class HookCommand(msgspec.Struct):
    """A command of hippod's that an agent host runs (a hook entry, a plugin's call), for doctor's
    client half to run the host's way: `entry` names it, `fix` is the command that rewrites it."""

    entry: str
    command: str
    fix: str


class DoctorReply(msgspec.Struct):
    """The daemon's half of `doctor`: its checks, in the order they are printed, the installed hook
    commands, and the commands of the project's hippo blocks that are hippod's own under this client
    (`entry` names the file)."""

    checks: list[Check]
    commands: list[HookCommand] = msgspec.field(default_factory=list)
    blocks: list[HookCommand] = msgspec.field(default_factory=list)


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
    vectors: dict[str, int] = msgspec.field(default_factory=dict)  # embeddings per model


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
