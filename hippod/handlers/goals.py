"""`goal push|pop|list`: the goal stack (hippod/continuity/goals.py); recall's lift is
hippod/recall/goal_lift.py."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippoctl.protocol.messages_goals import GOAL_OUTCOMES
from hippoctl.protocol.replies_goals import GoalPopReply, GoalsReply
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.continuity import goals


async def goal_push(ctx: RequestContext, body: m.GoalPush) -> tuple[GoalsReply, str]:
    tag = body.tag.strip()
    problem = validate.goal_problem(tag)
    if problem is not None:
        raise HippoError("usage", problem)
    return await goals.push(ctx, tag, own_session=body.session)


async def goal_pop(ctx: RequestContext, body: m.GoalPop) -> tuple[GoalPopReply, str]:
    if body.outcome is not None and body.outcome not in GOAL_OUTCOMES:
        raise HippoError("usage", f"--outcome must be one of {', '.join(GOAL_OUTCOMES)}")
    return await goals.pop(ctx, body.outcome, own_session=body.session)


async def goal_list(ctx: RequestContext, body: m.GoalList) -> tuple[GoalsReply, str]:
    return await goals.listing(ctx, every=body.all)
