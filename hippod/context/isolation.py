"""Project isolation for `context` (recall.md §9.5): which section a memory goes in, if any."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum


class Place(Enum):
    MAIN = "main"  # the project memory section
    OTHER = "other"  # the --cross-project section
    HIDDEN = "hidden"


def placement(
    origin_project: str | None,
    source: str,
    current_project: str,
    *,
    isolation: bool,
    cross_project: bool,
    is_secret: Callable[[], bool],
) -> Place:
    """Where a memory goes. `current_project` is '' when there is no project store.

    A row without an origin belongs to the store it lives in: a project-store row to this project,
    a global row to no project. Secret-flagged rows show only in their own project, whatever the
    flags; `is_secret` is called only for rows of another (or no) project, as the check costs.
    """
    own = origin_project or (current_project if source == "local" else "")
    if own == current_project:
        return Place.MAIN
    if is_secret():
        return Place.HIDDEN
    if not origin_project or not isolation:
        return Place.MAIN
    return Place.OTHER if cross_project else Place.HIDDEN
