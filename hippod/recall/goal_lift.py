"""The goal multiplier of recall's score: `recall --goal <tag>`, else the goals on the stack.

A memory is tagged for a goal when it carries the goal's tag itself or `goal:<tag>`. The weights
are the original hippo's: ×1.5 for `--goal`; for the stack, ×2.0 for the first goal a memory is
tagged for and ×0.5 more for each further one, never above ×3.0. `--goal` stands alone: with it
the stack does not lift that recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hippod.store.sqlite.goals import Goal

EXPLICIT = 1.5  # recall --goal <tag>
FIRST = 2.0  # the first goal on the stack a memory is tagged for
EACH_MORE = 0.5  # each further one
CAP = 3.0
# Only the top goals of each stack lift; the ones under them wait until those are popped.
LIFTING_DEPTH = 3
PREFIX = "goal:"


def tagged_for(tags: Sequence[str], tag: str) -> bool:
    """Whether a memory with these tags is tagged for the goal `tag`."""
    return tag in tags or PREFIX + tag in tags


def stack_multiplier(matched: int) -> float:
    """The lift of a memory tagged for `matched` distinct goals on the stack."""
    if matched <= 0:
        return 1.0
    return min(CAP, FIRST + EACH_MORE * (matched - 1))


def lifting(goals: Sequence[Goal]) -> list[Goal]:
    """Of the active goals (in push order), the top LIFTING_DEPTH of each stack, in push order."""
    kept: list[Goal] = []
    seen: dict[str, int] = {}
    for goal in reversed(goals):
        depth = seen.get(goal.session, 0)
        if depth < LIFTING_DEPTH:
            kept.append(goal)
        seen[goal.session] = depth + 1
    return kept[::-1]


@dataclass(frozen=True, slots=True)
class GoalLift:
    """What lifts one recall: the `--goal` tag, else the lifting goals on the stack."""

    explicit: str | None = None
    stack: tuple[Goal, ...] = ()
    _tags: tuple[str, ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        # The same tag on the store's and the session's stack counts once.
        object.__setattr__(self, "_tags", tuple(dict.fromkeys(g.tag for g in self.stack)))

    @property
    def in_play(self) -> bool:
        """Whether this recall has a goal at all (then --why lists the goal factor of every memory)."""
        return self.explicit is not None or bool(self.stack)

    def multiplier(self, tags: Sequence[str]) -> float:
        if self.explicit is not None:
            return EXPLICIT if tagged_for(tags, self.explicit) else 1.0
        return stack_multiplier(sum(1 for tag in self._tags if tagged_for(tags, tag)))

    def goals_of(self, tags: Sequence[str]) -> list[Goal]:
        """The goals on the stack that lifted a memory with these tags (none under `--goal`)."""
        if self.explicit is not None:
            return []
        return [g for g in self.stack if tagged_for(tags, g.tag)]


NO_GOALS = GoalLift()  # a recall without a goal
