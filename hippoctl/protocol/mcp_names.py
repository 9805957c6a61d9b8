"""The tools `hippoctl mcp` and the daemon's `POST /mcp` serve, by name, in the order tools/list gives them.

The table mcp_specs.py serves its signatures from, kept apart from them so `hippoctl --help` counts
the tools without loading the MCP SDK's pydantic.
"""

from __future__ import annotations

TOOL_NAMES: tuple[str, ...] = (
    "hippo_recall",
    "hippo_assemble",
    "hippo_drill",
    "hippo_remember",
    "hippo_outcome",
    "hippo_context",
    "hippo_status",
    "hippo_learn",
    "hippo_conflicts",
    "hippo_resolve",
    "hippo_share",
    "hippo_peers",
    "hippo_predict_baserate",
    "hippo_card_list",
    "hippo_card_show",
    "hippo_card_create",
    "hippo_card_claim",
    "hippo_card_move",
    "hippo_card_comment",
)
