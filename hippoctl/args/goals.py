"""Arguments of the goal stack: goal push <tag>, goal pop, goal list.

The options that do not belong to the action given are refused here, before the daemon is contacted.
"""

from __future__ import annotations

import argparse
import os

from hippoctl.args.argcheck import UsageError, check, refuse_options, utf8
from hippoctl.args.registry import AddVerb, Builder, register
from hippoctl.protocol import messages as m
from hippoctl.protocol import validate
from hippoctl.protocol.messages_goals import GOAL_OUTCOMES

GOAL_ACTIONS = ("push", "pop", "list")


def add_verbs(verb: AddVerb) -> None:
    """Register `goal` on the hippoctl parser."""
    p = verb(
        "goal",
        "the goal stack: goal push <tag> | pop | list; recall ranks memories tagged for it higher",
        "hippoctl goal push db-rewrite",
        "hippoctl goal list --all",
        "hippoctl goal pop --outcome good",
        "hippoctl goal list --json",
    )
    p.add_argument("action", choices=GOAL_ACTIONS, help="push a goal, pop the newest, or list the stack")
    p.add_argument("tag", nargs="?", help="with push: the goal's tag (memories tagged <tag> or goal:<tag>)")
    p.add_argument(
        "--session",
        action="store_true",
        help="with push or pop: the session's own stack ($HIPPO_SESSION_ID) instead of the store's",
    )
    p.add_argument(
        "--outcome",
        choices=GOAL_OUTCOMES,
        help="with pop: mark the memories recalled under the goal good or bad, as `outcome` does",
    )
    p.add_argument("--all", dest="show_all", action="store_true", help="with list: popped goals too")


_FLAGS = {"tag": "a goal tag", "session": "--session", "outcome": "--outcome", "show_all": "--all"}


def _needs_session(action: str) -> None:
    """`--session` outside any session has no stack to use."""
    if not os.environ.get("HIPPO_SESSION_ID", "").strip():
        raise UsageError(f"goal {action} --session needs a session: set HIPPO_SESSION_ID")


def _goal(args: argparse.Namespace) -> m.Body:
    if args.action == "push":
        refuse_options(args, "goal", {"tag", "session"}, _FLAGS)
        if args.tag is None:
            raise UsageError("goal push needs a tag")
        tag = utf8(args.tag, "the goal tag").strip()
        check(validate.goal_problem(tag))
        if args.session:
            _needs_session("push")
        return m.GoalPush(tag=tag, session=args.session)
    if args.action == "pop":
        refuse_options(args, "goal", {"session", "outcome"}, _FLAGS)
        if args.session:
            _needs_session("pop")
        return m.GoalPop(session=args.session, outcome=args.outcome)
    refuse_options(args, "goal", {"show_all"}, _FLAGS)
    return m.GoalList(all=args.show_all)


BUILDERS: dict[str, Builder] = {"goal": _goal}

register("goals", add_verbs, BUILDERS)
