"""Typed reply data of `import --agents` (ingest.md §4). See replies.py for the conventions."""

from __future__ import annotations

import msgspec

from hippoctl.protocol.replies import Reply


class AgentToolReport(Reply):
    """One tool's part of an agent-notes import: where it looked and what changed."""

    tool: str
    home: str
    home_exists: bool
    folders: list[str]
    added: int = 0
    replaced: int = 0
    dormant: int = 0
    unchanged: int = 0
    skipped: dict[str, int] = msgspec.field(default_factory=dict)
    ids: list[str] = msgspec.field(default_factory=list)


class AgentImportReply(Reply):
    dry_run: bool
    tools: list[AgentToolReport]
    added: int = 0
    replaced: int = 0
    dormant: int = 0
    skipped: int = 0
    warnings: list[str] = msgspec.field(default_factory=list)
