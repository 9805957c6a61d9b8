"""Request bodies of the goal stack: goal push, pop and list; part of messages.RequestBody."""

from __future__ import annotations

from hippoctl.protocol.body import Body

GOAL_OUTCOMES = ("good", "bad")


class GoalPush(Body):
    tag: str
    session: bool = False  # on the session's own stack (HIPPO_SESSION_ID), not the store's


class GoalPop(Body):
    """The newest goal of the store's stack and the session's; with `session`, of the session's alone."""

    session: bool = False
    outcome: str | None = None  # good | bad: marks the memories recalled under the goal


class GoalList(Body):
    all: bool = False  # popped goals too, with their outcome


# Every request body of this family, for messages.RequestBody.
BODIES = GoalPush | GoalPop | GoalList
