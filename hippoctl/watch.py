"""`watch "<command>"`: run a command through the shell; report its failure to the daemon (ingest.md §6).

The command runs here, in the client, so `hippoctl watch` always exits with the command's own code.
"""

from __future__ import annotations

from hippoctl.argcheck import UsageError


def run(command: str, *, cwd: str, global_store: bool, spawn: bool) -> int:
    """Run `command`, stream its output, send a WatchFailure when it fails; returns its exit code."""
    raise UsageError("watch is not built yet")
