"""The text a `sleep` prints (sleep.md §9), from its SleepReply."""

from __future__ import annotations

from collections.abc import Sequence

from hippoctl.protocol.replies_lifecycle import SleepReply

DETAIL_LINES = 50
DRY_RUN_HEADER = "Dry run — nothing was written."


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def cap_details(lines: Sequence[str]) -> list[str]:
    """At most 50 detail lines, then `… N more`."""
    if len(lines) <= DETAIL_LINES:
        return list(lines)
    return [*lines[:DETAIL_LINES], f"… {len(lines) - DETAIL_LINES} more"]


def _row(label: str, value: int) -> str:
    return f"  {label}{value:>{23 - len(label)}}"


def render(reply: SleepReply) -> str:
    """The results block, under the dry-run header for --dry-run."""
    decay_deleted = reply.removed - reply.dormant_moved - reply.secret_deleted
    removed = _row("Removed (decayed):", reply.removed)
    if reply.removed:
        parts = [f"dormant {reply.dormant_moved}"]
        if decay_deleted:
            parts.append(f"deleted {decay_deleted}")
        parts.append(f"deleted as secret {reply.secret_deleted}")
        removed += f"   ({', '.join(parts)})"
    d, c = reply.deduped, reply.conflicts
    deduped = d.episodic + d.semantic + d.cross_layer
    lines = [
        "Running consolidation...",
        "",
        "Results:",
        _row("Active memories:", reply.active),
        removed,
        _row("Merged episodic:", reply.merged),
        _row("New semantic:", reply.semantic_created),
        _row("Dormant expired:", reply.dormant_expired),
        f"Learned {plural(reply.learned, 'lesson', 'lessons')} from git; "
        f"imported {plural(reply.agent_notes, 'agent note', 'agent notes')}",
        f"Deduped {plural(deduped, 'duplicate', 'duplicates')} "
        f"(episodic {d.episodic}, semantic {d.semantic}, cross-layer {d.cross_layer})",
        f"Removed {plural(reply.junk_removed, 'junk memory', 'junk memories')} "
        f"({plural(reply.junk_warnings, 'warning', 'warnings')})",
        f"Open conflicts: {c.open} ({c.new} new, {c.auto_resolved} auto-resolved)",
        f"Auto-shared {plural(reply.shared, 'memory', 'memories')} to the global store",
    ]
    if reply.details:
        lines.append("Details:")
        lines += [f"  {line}" for line in reply.details]
    text = "\n".join(lines)
    return f"{DRY_RUN_HEADER}\n{text}" if reply.dry_run else text
