"""Typed reply data of MCP tool calls (integrations.md §11). See replies.py for the conventions.

Every tool call answers with `McpToolReply`: the tool's name and its own reply data, which is the
reply struct of the verb it reuses (e.g. RecallReply) or one of the structs below.
"""

from __future__ import annotations

from typing import Any

import msgspec

from hippoctl.protocol.replies import Reply


class McpToolReply(Reply):
    tool: str
    result: Any = None


class AssembledItem(Reply):
    kind: str  # event or handoff
    id: int
    created_at: str
    text: str
    full: bool  # False: its one-line summary


class AssembleReply(Reply):
    """`hippo_assemble`: the session's items, how many shown in full, as bullets, or left out."""

    session_id: str
    budget: int
    tokens: int
    total: int
    full: int
    summarized: int
    left_out: int
    items: list[AssembledItem] = msgspec.field(default_factory=list)


class DrillItem(Reply):
    id: str
    depth: int
    first_line: str | None  # None: the parent is no longer stored


class DrillReply(Reply):
    """`hippo_drill`: the merged memory and the parents listed, walking `parents` down to `depth`."""

    id: str
    depth: int
    tokens: int
    parents: list[DrillItem]
    left_out: int


class BaserateReply(Reply):
    """`hippo_predict_baserate`: counts and rates of `trace_outcome` among the tag's trace memories."""

    tag: str
    traces: int
    counts: dict[str, int]
    rates: dict[str, float]
