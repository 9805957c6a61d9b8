"""`hippoctl mcp`: an MCP server over stdio on the official SDK (integrations.md §11). Skeleton."""

from __future__ import annotations

from hippoctl.argcheck import UsageError


def run(*, cwd: str, global_store: bool, spawn: bool) -> int:
    """Serve MCP on stdin/stdout until the client closes stdin; returns the exit code."""
    raise UsageError("mcp is not available yet")
