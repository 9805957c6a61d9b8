"""Arguments of the lifecycle verbs: supersede, reject, invalidate, decide, dormant, audit, sleep,
conflicts, sharing and the daily run (memory-model.md §12-§15, sleep.md)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from hippoctl import args_ingest
from hippoctl.argcheck import UsageError, check, read_text, utf8
from hippoctl.protocol import messages as m
from hippoctl.protocol import validate

AddVerb = Callable[[str, str], argparse.ArgumentParser]

DECISION_STATUSES = ("active", "superseded", "closed")
CONFLICT_STATUSES = ("open", "resolved", "all")


def add_verbs(verb: AddVerb) -> None:
    """Register the lifecycle verbs on the hippoctl parser."""
    p = verb("supersede", "store a new version of a memory; the old one leaves recall")
    p.add_argument("id")
    p.add_argument("text", help="the new version ('-' reads stdin)")
    p.add_argument(
        "--tag", action="append", metavar="T", help="tags of the new version (default: the old ones)"
    )
    p.add_argument("--pin", action="store_true", default=None)
    p.add_argument("--layer", choices=["episodic", "semantic", "trace"])

    p = verb("reject", "tombstone a value: delete its copies and refuse it from now on")
    p.add_argument("id", nargs="?")
    p.add_argument("--value", help="the text to reject, instead of a memory id")
    p.add_argument("--reason", required=True)

    verb("rejections", "list the tombstones (digest, reason, when, by)")

    p = verb("unreject", "remove one tombstone")
    p.add_argument("prefix", help="a digest prefix of at least 4 hex characters")

    p = verb("invalidate", "weaken memories about something that was replaced")
    p.add_argument("pattern", nargs="?")
    p.add_argument("--id")
    p.add_argument("--reason")
    p.add_argument("--dry-run", action="store_true")

    p = verb("decide", "record a decision; also: decide list|get <n>|close <n>")
    p.add_argument("words", nargs="+", metavar="text")
    p.add_argument("--context")
    p.add_argument("--supersedes", metavar="MEM_ID")
    p.add_argument("--status", choices=DECISION_STATUSES, help="with `decide list`")

    p = verb("dormant", "list or search dormant memories; also: dormant restore|forget <id>")
    p.add_argument("words", nargs="*", metavar="query")
    p.add_argument("--limit", type=int, default=20)

    p = verb("audit", "audit list [--op] [--since] [--limit] | audit prune --days N")
    p.add_argument("action", choices=["list", "prune"])
    p.add_argument("--op")
    p.add_argument("--since", metavar="ISO")
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--days", type=int)

    p = verb("sleep", "consolidate the store: decay, merge, dedupe, junk, conflicts, share")
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--no-learn", action="store_true")
    p.add_argument("--no-share", action="store_true")
    p.add_argument(
        "--verbose", action="store_true", help="the full report of every change, and phase progress on stderr"
    )

    p = verb("conflicts", "list detected conflicts")
    p.add_argument("--status", choices=CONFLICT_STATUSES, default="open")

    p = verb("resolve", "show a conflict, or keep one side and weaken, delete or reject the other")
    p.add_argument("n", type=int, metavar="conflict-id")
    p.add_argument("--keep", metavar="MEM_ID")
    p.add_argument("--forget", action="store_true")
    p.add_argument("--reject-loser", action="store_true")
    p.add_argument("--reason")

    p = verb("promote", "copy a project memory into the global store")
    p.add_argument("id")

    p = verb("share", "copy a memory to the global store with its transfer score, or --auto")
    p.add_argument("id", nargs="?")
    p.add_argument("--force", action="store_true")
    p.add_argument("--auto", action="store_true")
    p.add_argument("--min-score", type=float, default=0.6)
    p.add_argument("--dry-run", action="store_true")

    verb("peers", "projects contributing to the global store")

    p = verb("sync", "copy global memories into this project's store")
    p.add_argument("--cross-project", action="store_true")

    p = verb("workspaces", "the daily-run registry: workspaces list | add <dir> | remove <dir>")
    p.add_argument("action", choices=["list", "add", "remove"], nargs="?", default="list")
    p.add_argument("path", nargs="?")

    verb("daily-runner", "run the daily job now (every registered workspace, then the global store)")


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{what} must be a number, not {text!r}") from None


def _decide(args: argparse.Namespace) -> m.Body:
    words: list[str] = args.words
    head = words[0]
    if head in ("get", "close") and len(words) == 2:
        n = _int(words[1], f"decide {head}")
        return m.DecideGet(n=n) if head == "get" else m.DecideClose(n=n)
    if head == "list" and len(words) == 1:
        return m.DecideList(status=args.status)
    if args.status is not None:
        raise UsageError("--status goes with `decide list`")
    return m.Decide(
        text=read_text(" ".join(words)),
        context=utf8(args.context, "--context"),
        supersedes=utf8(args.supersedes, "--supersedes"),
    )


def _dormant(args: argparse.Namespace) -> m.Body:
    words: list[str] = args.words
    if len(words) == 2 and words[0] in ("restore", "forget"):
        return m.DormantRestore(id=words[1]) if words[0] == "restore" else m.DormantForget(id=words[1])
    if args.limit < 1:
        raise UsageError("--limit must be 1 or more")
    query = utf8(" ".join(words), "the query") if words else None
    return m.Dormant(query=query, limit=args.limit)


def _audit(args: argparse.Namespace) -> m.Body:
    if args.action == "prune":
        if args.days is None or args.days < 0:
            raise UsageError("audit prune needs --days N (0 or more)")
        return m.AuditPrune(days=args.days)
    if not 1 <= args.limit <= 10_000:
        raise UsageError("--limit must be between 1 and 10000")
    return m.AuditList(op=args.op, since=args.since, limit=args.limit)


def _reject(args: argparse.Namespace) -> m.Body:
    if (args.id is None) == (args.value is None):
        raise UsageError("reject takes a memory id or --value, not both")
    value = None if args.value is None else read_text(args.value)
    return m.Reject(reason=utf8(args.reason, "--reason"), id=args.id, value=value)


def _invalidate(args: argparse.Namespace) -> m.Body:
    if (args.pattern is None) == (args.id is None):
        raise UsageError('invalidate takes a "<pattern>" or --id, not both')
    return m.Invalidate(
        pattern=utf8(args.pattern, "the pattern"), id=args.id, reason=args.reason, dry_run=args.dry_run
    )


def _resolve(args: argparse.Namespace) -> m.Body:
    if (args.forget or args.reject_loser) and args.keep is None:
        raise UsageError("--forget and --reject-loser need --keep <mem-id>")
    if args.forget and args.reject_loser:
        raise UsageError("choose --forget or --reject-loser, not both")
    return m.Resolve(
        n=args.n, keep=args.keep, forget=args.forget, reject_loser=args.reject_loser, reason=args.reason
    )


def _share(args: argparse.Namespace) -> m.Body:
    if args.auto == (args.id is not None):
        raise UsageError("share takes a memory id or --auto, not both")
    if not 0.0 <= args.min_score <= 1.0:
        raise UsageError("--min-score must be between 0 and 1")
    return m.Share(
        id=args.id, force=args.force, auto=args.auto, min_score=args.min_score, dry_run=args.dry_run
    )


def _workspaces(args: argparse.Namespace) -> m.Body:
    if args.action == "list":
        if args.path is not None:
            raise UsageError("workspaces list takes no directory")
        return m.Workspaces(action="list")
    if args.path is None:
        raise UsageError(f"workspaces {args.action} needs a directory")
    return m.Workspaces(action=args.action, path=utf8(args.path, "the directory"))


BUILDERS: dict[str, Callable[[argparse.Namespace], m.Body]] = {
    "supersede": lambda a: m.Supersede(
        id=a.id, content=read_text(a.text), tags=a.tag, pin=a.pin, layer=a.layer
    ),
    "reject": _reject,
    "rejections": lambda a: m.Rejections(),
    "unreject": lambda a: m.Unreject(prefix=a.prefix),
    "invalidate": _invalidate,
    "decide": _decide,
    "dormant": _dormant,
    "audit": _audit,
    "sleep": lambda a: m.Sleep(
        dry_run=a.dry_run, no_learn=a.no_learn, no_share=a.no_share, verbose=a.verbose
    ),
    "conflicts": lambda a: m.Conflicts(status=a.status),
    "resolve": _resolve,
    "promote": lambda a: m.Promote(id=a.id),
    "share": _share,
    "peers": lambda a: m.Peers(),
    "sync": lambda a: m.Sync(cross_project=a.cross_project),
    "workspaces": _workspaces,
    "daily-runner": lambda a: m.DailyRunner(),
}


def build_body(args: argparse.Namespace) -> m.Body:
    """The request body of a lifecycle verb; raises UsageError for arguments the daemon would refuse."""
    builder = BUILDERS.get(args.verb) or args_ingest.BUILDERS.get(args.verb)
    if builder is None:
        raise UsageError(f"unknown verb {args.verb}")
    check(validate.query_problem(args.pattern) if args.verb == "invalidate" and args.pattern else None)
    return builder(args)
