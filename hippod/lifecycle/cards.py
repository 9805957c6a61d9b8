"""The work-queue cards' rules (integrations.md §14) as pure functions: the moves each verb may make,
the lease, and the dependency-cycle check."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from hippoctl.protocol.messages_cards import OUTCOMES as OUTCOMES  # re-exported beside the rules

LEASE = timedelta(hours=4)

# verb -> (the states it moves from, the state it moves to); a heartbeat keeps a running card running.
MOVES: dict[str, tuple[tuple[str, ...], str]] = {
    "claim": (("ready", "blocked"), "running"),
    "heartbeat": (("running",), "running"),
    "block": (("running",), "blocked"),
    "review": (("running",), "review"),
    "complete": (("review",), "done"),  # or shelved: see completed_state
    "reclaim": (("running",), "ready"),
}


def lease_until(now: datetime) -> datetime:
    """When a run claimed or heartbeaten at `now` expires."""
    return now + LEASE


def completed_state(outcome: str) -> str:
    """`complete --outcome success` makes a card done; failure and partial shelve it."""
    return "done" if outcome == "success" else "shelved"


def initial_state(unfinished_deps: int) -> str:
    """A new card is ready, or waiting while any dependency is not done."""
    return "waiting" if unfinished_deps else "ready"


def cycle_through(edges: Iterable[tuple[int, int]], card: int, new_deps: Iterable[int]) -> list[int] | None:
    """The cycle that adding `card -> d` for each d in `new_deps` would close, as the path
    [card, ..., card]; None when the graph stays acyclic. An edge (a, b) means a depends on b."""
    graph: dict[int, list[int]] = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
    for dep in new_deps:
        if dep == card:
            return [card, card]
        # Depth-first from the new dependency: reaching `card` again closes a loop.
        stack: list[tuple[int, list[int]]] = [(dep, [card, dep])]
        seen = {dep}
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == card:
                    return [*path, card]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    return None
