"""Reply of `setup` (integrations.md §2)."""

from __future__ import annotations

import msgspec

from hippoctl.protocol.replies import Reply


class SetupReply(Reply):
    """targets: agents whose user-level wiring was installed (or would be, with --dry-run);
    refreshed: projects whose instruction blocks were refreshed (the one setup ran in, and with
    `--all` every registered workspace)."""

    dry_run: bool
    global_store: str
    targets: list[str] = msgspec.field(default_factory=list)
    service: str | None = None
    imported: int = 0
    refreshed: list[str] = msgspec.field(default_factory=list)
    lines: list[str] = msgspec.field(default_factory=list)
