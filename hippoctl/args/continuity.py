"""Arguments of the continuity verbs: snapshot, session, handoff, current and wm (continuity.md §1-§5).

Each verb takes an action word (`snapshot save`, `wm push`, ...); the options that do not belong to
the action given are refused here, before the daemon is contacted.
"""

from __future__ import annotations

import argparse
import os
import time

from hippoctl.args.argcheck import FRACTION, Number, UsageError, needed, refuse_options, utf8
from hippoctl.args.registry import AddVerb, Builder, register
from hippoctl.protocol import messages as m
from hippoctl.protocol import validate

SNAPSHOT_ACTIONS = ("save", "show", "clear")
SESSION_ACTIONS = ("log", "show", "latest", "resume")
HANDOFF_ACTIONS = ("create", "latest", "show")
WM_ACTIONS = ("push", "read", "clear", "flush")
SESSION_DEFAULT = "the session id (default: $HIPPO_SESSION_ID)"


def add_verbs(verb: AddVerb) -> None:
    """Register the continuity verbs on the hippoctl parser."""
    p = verb(
        "snapshot",
        "the active task snapshot: snapshot save | show | clear",
        'hippoctl snapshot save --task "Fix login redirect" --summary "cookie path was wrong"',
        "hippoctl snapshot show --json",
        "hippoctl snapshot clear --status done",
    )
    p.add_argument(
        "action", choices=SNAPSHOT_ACTIONS, help="save a new one, show the active one, or clear it"
    )
    p.add_argument("--task", help="with save: the task in hand (required)")
    p.add_argument("--summary", help="with save: where it stands (required)")
    p.add_argument("--next-step", help="with save: what to do next")
    p.add_argument("--source", help="with save: who saved it (default cli)")
    p.add_argument("--session", metavar="ID", help=f"with save: {SESSION_DEFAULT}")
    p.add_argument("--status", help="with clear: the status the snapshot takes (default cleared)")

    p = verb(
        "session",
        "session events: session log | show | latest | resume",
        'hippoctl session log --id s1 --type decision --content "keep the v1 API"',
        "hippoctl session show --id s1 --limit 20",
        "hippoctl session latest",
    )
    p.add_argument(
        "action",
        choices=SESSION_ACTIONS,
        help="log an event, show a session's events, latest (snapshot + events) or resume (last handoff)",
    )
    p.add_argument("--id", dest="session_id", metavar="SESSION", help=f"with log or show: {SESSION_DEFAULT}")
    p.add_argument("--content", help="with log: the event's text (required)")
    p.add_argument(
        "--type",
        dest="event_type",
        metavar="TYPE",
        help="with log: note (default), progress, decision, blocker, ...",
    )
    p.add_argument("--task", help="with log: the task it belongs to; with show: that task's events")
    p.add_argument("--source", help="with log: who logged it (default cli)")
    p.add_argument(
        "--limit", type=Number(1, 1000), metavar="N", help="with show: at most N events (default 8)"
    )

    p = verb(
        "handoff",
        "session handoffs: handoff create | latest | show <id>",
        'hippoctl handoff create --summary "login fixed, tests green" --next "deploy to staging"',
        "hippoctl handoff latest",
        "hippoctl handoff show 3",
    )
    p.add_argument(
        "action", choices=HANDOFF_ACTIONS, help="create one, print the latest, or show one by number"
    )
    p.add_argument("id", nargs="?", help="with show: the handoff number")
    p.add_argument("--summary", help="with create: what was done (required)")
    p.add_argument("--next", help="with create: what the next session should do")
    p.add_argument(
        "--session", metavar="ID", help="with create: default $HIPPO_SESSION_ID, else a fallback id"
    )
    p.add_argument("--task", metavar="ID", help="with create: a task id; card:<n> links a work-queue card")
    p.add_argument(
        "--artifact",
        action="append",
        default=[],
        metavar="PATH",
        help="with create: a file it refers to (repeatable)",
    )

    p = verb(
        "current",
        "compact state: the active task and its session's last events",
        "hippoctl current show",
        "hippoctl current show --json",
    )
    p.add_argument("action", choices=["show"], help="show (the only action)")

    p = verb(
        "wm",
        "working memory: wm push | read | clear | flush",
        'hippoctl wm push --scope review --content "check the retry loop" --importance 0.8',
        "hippoctl wm read --scope review",
        "hippoctl wm flush --scope review",
    )
    p.add_argument(
        "action",
        choices=WM_ACTIONS,
        help="push an entry, read a scope, clear it, or flush it (prints what it removes)",
    )
    p.add_argument("--scope", default="default", help="the working-memory scope (default %(default)s)")
    p.add_argument("--content", help="with push: the entry's text (required)")
    p.add_argument(
        "--importance", type=FRACTION, help="with push: 0 to 1 (default 0.5); the lowest goes first"
    )
    p.add_argument("--session", metavar="ID", help="the session id; with clear or flush: only its entries")


_SNAPSHOT_FLAGS = {
    "task": "--task",
    "summary": "--summary",
    "next_step": "--next-step",
    "source": "--source",
    "session": "--session",
    "status": "--status",
}


def _snapshot(args: argparse.Namespace) -> m.Body:
    if args.action == "save":
        refuse_options(
            args, "snapshot", {"task", "summary", "next_step", "source", "session"}, _SNAPSHOT_FLAGS
        )
        return m.SnapshotSave(
            task=needed(args.task, "--task", "snapshot save"),
            summary=needed(args.summary, "--summary", "snapshot save"),
            next_step=utf8(args.next_step, "--next-step"),
            source=utf8(args.source, "--source") or "cli",
            session=utf8(args.session, "--session"),
        )
    if args.action == "clear":
        refuse_options(args, "snapshot", {"status"}, _SNAPSHOT_FLAGS)
        return m.SnapshotClear(status=utf8(args.status, "--status") or "cleared")
    refuse_options(args, "snapshot", set(), _SNAPSHOT_FLAGS)
    return m.SnapshotShow()


_SESSION_FLAGS = {
    "session_id": "--id",
    "content": "--content",
    "event_type": "--type",
    "task": "--task",
    "source": "--source",
    "limit": "--limit",
}


def _env_session() -> str | None:
    return os.environ.get("HIPPO_SESSION_ID", "").strip() or None


def _session(args: argparse.Namespace) -> m.Body:
    if args.action == "log":
        refuse_options(
            args, "session", {"session_id", "content", "event_type", "task", "source"}, _SESSION_FLAGS
        )
        session_id = args.session_id if args.session_id is not None else _env_session()
        return m.SessionLog(
            session_id=needed(session_id, "--id (or HIPPO_SESSION_ID)", "session log"),
            content=needed(args.content, "--content", "session log"),
            type=utf8(args.event_type, "--type") or "note",
            task=utf8(args.task, "--task"),
            source=utf8(args.source, "--source") or "cli",
        )
    if args.action == "show":
        refuse_options(args, "session", {"session_id", "task", "limit"}, _SESSION_FLAGS)
        if args.session_id is not None and args.task is not None:
            raise UsageError("session show takes --id or --task, not both")
        limit = 8 if args.limit is None else args.limit
        return m.SessionShow(
            session_id=utf8(args.session_id, "--id"), task=utf8(args.task, "--task"), limit=limit
        )
    refuse_options(args, "session", set(), _SESSION_FLAGS)
    return m.SessionLatest() if args.action == "latest" else m.SessionResume()


_HANDOFF_FLAGS = {
    "id": "a handoff number",
    "summary": "--summary",
    "next": "--next",
    "session": "--session",
    "task": "--task",
    "artifact": "--artifact",
}


def fallback_session() -> str:
    """The session id of a handoff made outside any session: fallback-<epoch ms>-<client pid>."""
    return f"fallback-{time.time_ns() // 1_000_000}-{os.getpid()}"


def _handoff(args: argparse.Namespace) -> m.Body:
    if args.action == "create":
        refuse_options(args, "handoff", {"summary", "next", "session", "task", "artifact"}, _HANDOFF_FLAGS)
        session: str | None = args.session if args.session is not None else _env_session()
        return m.HandoffCreate(
            summary=needed(args.summary, "--summary", "handoff create"),
            session_id=utf8(session, "--session") if session else fallback_session(),
            next=utf8(args.next, "--next"),
            task=utf8(args.task, "--task"),
            artifacts=[utf8(a, "--artifact") for a in args.artifact],
        )
    if args.action == "show":
        refuse_options(args, "handoff", {"id"}, _HANDOFF_FLAGS)
        if args.id is None:
            raise UsageError("handoff show needs a handoff number")
        text = args.id.removeprefix("#")
        # isdigit() alone accepts "²", which int() refuses; SQLite ids end at 2**63 - 1.
        if not (text.isascii() and text.isdigit()) or int(text) > validate.MAX_ID:
            raise UsageError(f"the handoff number must be a number, not {args.id!r}")
        return m.HandoffShow(id=int(text))
    refuse_options(args, "handoff", set(), _HANDOFF_FLAGS)
    return m.HandoffLatest()


_WM_FLAGS = {"content": "--content", "importance": "--importance", "session": "--session"}


def _scope(args: argparse.Namespace) -> str:
    scope: str = utf8(args.scope, "--scope").strip()
    if not scope:
        raise UsageError("--scope is empty")
    return scope


def _wm(args: argparse.Namespace) -> m.Body:
    scope = _scope(args)
    if args.action == "push":
        importance = 0.5 if args.importance is None else args.importance
        return m.WmPush(
            content=needed(args.content, "--content", "wm push"),
            scope=scope,
            importance=importance,
            session=utf8(args.session, "--session"),
        )
    if args.action == "read":
        refuse_options(args, "wm", set(), _WM_FLAGS)
        return m.WmRead(scope=scope)
    refuse_options(args, "wm", {"session"}, _WM_FLAGS)
    session = utf8(args.session, "--session")
    return (
        m.WmClear(scope=scope, session=session)
        if args.action == "clear"
        else m.WmFlush(scope=scope, session=session)
    )


BUILDERS: dict[str, Builder] = {
    "snapshot": _snapshot,
    "session": _session,
    "handoff": _handoff,
    "current": lambda a: m.CurrentShow(),
    "wm": _wm,
}

register("continuity", add_verbs, BUILDERS)
