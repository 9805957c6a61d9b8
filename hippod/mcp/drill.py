"""`hippo_drill`: the memories a merged memory was made from (its `parents`, sleep.md §5), as an
indented list within a count limit and a token budget. Pure functions: the handler walks the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hippoctl.protocol.wording import plural
from hippod.continuity.render import cut, first_line

LINE_CHARS = 120
GONE = "(no longer stored)"
RESERVED_MORE = 999_999


@dataclass(frozen=True, slots=True)
class Node:
    """One parent met on the walk: its depth below the merged memory (1 = a direct parent) and its
    first line, None when the row is no longer stored."""

    id: str
    depth: int
    line: str | None


@dataclass(frozen=True, slots=True)
class Drilled:
    text: str
    listed: list[Node]
    left_out: int


def heading(summary_id: str, parents: int, content: str) -> str:
    return cut(f"## {summary_id} merges {plural(parents, 'memory')}: {first_line(content)}", LINE_CHARS)


def node_line(node: Node) -> str:
    indent = "  " * (node.depth - 1)
    return indent + cut(f"- {node.id} {GONE if node.line is None else node.line}", LINE_CHARS)


def more_line(count: int) -> str:
    return f"({plural(count, 'more parent')} not shown: past the limit or the budget)"


def render(
    summary_id: str, parents: int, content: str, nodes: Sequence[Node], *, limit: int, budget: int
) -> Drilled:
    """The heading, then the walk's nodes in order while both `limit` and `budget` allow."""
    room = budget * 4
    top = heading(summary_id, parents, content)
    used = len(top) + 1 + len(more_line(RESERVED_MORE)) + 1
    if used > room:
        return Drilled("", [], len(nodes))
    listed: list[Node] = []
    lines = [top]
    for node in nodes[:limit]:
        line = node_line(node)
        if used + len(line) + 1 > room:
            break
        used += len(line) + 1
        listed.append(node)
        lines.append(line)
    left_out = len(nodes) - len(listed)
    if left_out:
        lines.append(more_line(left_out))
    return Drilled("\n".join(lines), listed, left_out)
