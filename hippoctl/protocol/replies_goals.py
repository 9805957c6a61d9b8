"""Typed reply data of the goal stack's verbs (goal push, pop and list). See replies.py for the
conventions."""

from __future__ import annotations

import msgspec

from hippoctl.protocol.replies import Reply


class GoalItem(Reply):
    id: int
    tag: str
    stack: str  # store | session
    session: str | None  # the session key of a session's goal
    status: str  # active | popped
    lifting: bool  # among the top goals of its stack, so recall lifts what is tagged for it
    recalled: int  # memories recalled under it while on the stack (a popped goal's record is gone: 0)
    outcome: str | None
    pushed_at: str
    popped_at: str | None


class GoalsReply(Reply):
    """`goal push|list`: the goals the session sees, bottom of the stack first."""

    goals: list[GoalItem] = msgspec.field(default_factory=list)
    session: str | None = None


class GoalPopReply(Reply):
    """`goal pop`: the goal popped; with an outcome, the memories recalled under it that it marked."""

    goal: GoalItem
    outcome: str | None = None
    applied: int = 0
    ids: list[str] = msgspec.field(default_factory=list)
    pinned: list[str] = msgspec.field(default_factory=list)
