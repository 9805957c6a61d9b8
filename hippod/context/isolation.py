"""Project isolation for `context` (recall.md §9.5): which section a memory goes in, if any."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from hippod.model.share import reaches_every_project


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
    memory_source: str,
) -> Place:
    """Where a memory goes. `current_project` is '' when there is no project store; `source` is the
    store the row was read from (local or global), `memory_source` the row's own `source`.

    A row without an origin belongs to the store it lives in: a project-store row to this project,
    a global row to no project. A copy `share`, `promote` or auto-share made holds beyond the
    project it names. Secret-flagged rows show only in their own project, whatever the flags;
    `is_secret` is called only for rows of another (or no) project, as the check costs.
    """
    own = origin_project or (current_project if source == "local" else "")
    if own == current_project:
        return Place.MAIN
    if is_secret():
        return Place.HIDDEN
    if not origin_project or not isolation or reaches_every_project(memory_source):
        return Place.MAIN
    return Place.OTHER if cross_project else Place.HIDDEN
