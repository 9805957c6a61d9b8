"""Arguments of the lifecycle verbs: supersede, reject, invalidate, decide, dormant, audit, sleep,
conflicts, sharing and the daily run (memory-model.md §12-§15, sleep.md)."""

from __future__ import annotations

import argparse

from hippoctl.args.argcheck import (
    COUNT,
    FRACTION,
    MEMORY_ID,
    Number,
    UsageError,
    check,
    read_text,
    tags,
    utf8,
)
from hippoctl.args.registry import AddVerb, Builder, register
from hippoctl.protocol import messages as m
from hippoctl.protocol import validate

DECISION_STATUSES = ("active", "superseded", "closed")
CONFLICT_STATUSES = ("open", "resolved", "all")
DRY_RUN = "print what would change and write nothing"


def add_verbs(verb: AddVerb) -> None:
    """Register the lifecycle verbs on the hippoctl parser."""
    p = verb(
        "supersede",
        "store a new version of a memory; the old one leaves recall",
        'hippoctl supersede mem_0123456789ab "Staging runs Postgres 16"',
        "hippoctl supersede mem_0123456789ab - --tag db < note.txt",
    )
    p.add_argument("id", type=MEMORY_ID, help="the memory to replace")
    p.add_argument("text", help="the new version ('-' reads stdin)")
    p.add_argument(
        "--tag",
        action="append",
        metavar="TAG",
        help="tags of the new version (repeatable; default: the old ones)",
    )
    p.add_argument("--pin", action="store_true", default=None, help="pin the new version")
    p.add_argument(
        "--layer",
        choices=["episodic", "semantic", "trace"],
        help="the new version's layer (default: the old one)",
    )

    p = verb(
        "refine",
        "ask the model for a clearer rewrite of a memory, then supersede it if you agree",
        "hippoctl refine mem_0123456789ab",
        "hippoctl refine mem_0123456789ab --yes",
        "hippoctl refine mem_0123456789ab --dry-run",
    )
    p.add_argument("id", type=MEMORY_ID, help="the memory to rewrite (its text is sent to the model)")
    p.add_argument("--yes", action="store_true", help="supersede without asking (for scripts)")
    p.add_argument("--dry-run", action="store_true", help="show the rewrite and change nothing")

    p = verb(
        "reject",
        "tombstone a value: delete its copies and refuse it from now on",
        'hippoctl reject mem_0123456789ab --reason "wrong: staging has no VPN"',
        'hippoctl reject --value "Deploy on Fridays" --reason "never true here"',
    )
    p.add_argument("id", nargs="?", type=MEMORY_ID, help="the memory whose text to reject")
    p.add_argument("--value", help="the text to reject, instead of a memory id")
    p.add_argument("--reason", required=True, help="why (required), kept with the tombstone")

    verb(
        "rejections",
        "list the tombstones (digest, reason, when, by)",
        "hippoctl rejections",
        "hippoctl rejections --json",
    )

    p = verb(
        "unreject", "remove one tombstone", "hippoctl unreject 3fa9c2", "hippoctl unreject 3fa9 --global"
    )
    p.add_argument("prefix", help="a digest prefix of at least 4 hex characters")

    p = verb(
        "invalidate",
        "weaken memories about something that was replaced",
        'hippoctl invalidate "webpack config" --reason "moved to vite"',
        'hippoctl invalidate "redis session cache" --dry-run',
        "hippoctl invalidate --id mem_0123456789ab",
    )
    p.add_argument("pattern", nargs="?", help="words naming the replaced thing")
    p.add_argument("--id", type=MEMORY_ID, help="weaken this one memory instead")
    p.add_argument("--reason", help="why, kept in the audit log")
    p.add_argument("--dry-run", action="store_true", help=DRY_RUN)

    p = verb(
        "decide",
        "record a decision; also: decide list|get <n>|close <n>",
        'hippoctl decide "Use Postgres for the job queue" --context "we already run it"',
        "hippoctl decide list --status active",
        "hippoctl decide close 3",
    )
    p.add_argument("words", nargs="+", metavar="text", help="the decision, or list | get <n> | close <n>")
    p.add_argument("--context", help="why it was decided")
    p.add_argument("--supersedes", metavar="MEM_ID", help="the decision memory this one replaces")
    p.add_argument(
        "--status", choices=DECISION_STATUSES, help="with `decide list`: only decisions in this state"
    )

    p = verb(
        "dormant",
        "list or search dormant memories; also: dormant restore|forget <id>",
        "hippoctl dormant",
        "hippoctl dormant deploy cache --limit 5",
        "hippoctl dormant restore mem_0123456789ab",
    )
    p.add_argument("words", nargs="*", metavar="query", help="words to search for, or restore | forget <id>")
    p.add_argument(
        "--limit", type=Number(1), default=20, metavar="N", help="at most N memories (default %(default)s)"
    )

    p = verb(
        "audit",
        "audit list [--op] [--since] [--limit] | audit prune --days N",
        "hippoctl audit list --op forget --since 2025-01-01",
        "hippoctl audit prune --days 90",
    )
    p.add_argument("action", choices=["list", "prune"], help="list entries, or prune old ones")
    p.add_argument("--op", help="with list: only this operation (remember, recall, forget, ...)")
    p.add_argument("--since", metavar="ISO", help="with list: only entries at or after this date or time")
    p.add_argument(
        "--limit",
        type=Number(1, 10_000),
        default=100,
        metavar="N",
        help="with list: at most N (default %(default)s)",
    )
    p.add_argument("--days", type=COUNT, metavar="N", help="with prune: delete entries older than N days")

    p = verb(
        "sleep",
        "consolidate the store: decay, merge, dedupe, junk, conflicts, share",
        "hippoctl sleep",
        "hippoctl sleep --dry-run",
        "hippoctl sleep --global --no-learn",
    )
    p.add_argument("--dry-run", action="store_true", help=DRY_RUN)
    p.add_argument("--no-learn", action="store_true", help="skip learning from git and agents' notes")
    p.add_argument("--no-share", action="store_true", help="skip auto-sharing to the global store")
    p.add_argument(
        "--verbose", action="store_true", help="the full report of every change, and phase progress on stderr"
    )

    p = verb(
        "conflicts", "list detected conflicts", "hippoctl conflicts", "hippoctl conflicts --status all --json"
    )
    p.add_argument(
        "--status", choices=CONFLICT_STATUSES, default="open", help="which conflicts (default %(default)s)"
    )

    p = verb(
        "resolve",
        "show a conflict, or keep one side and weaken, delete or reject the other",
        "hippoctl resolve 4",
        "hippoctl resolve 4 --keep mem_0123456789ab",
        'hippoctl resolve 4 --keep mem_0123456789ab --reject-loser --reason "outdated"',
    )
    p.add_argument(
        "n", type=_conflict_id, metavar="conflict-id", help="the conflict's number (from `conflicts`)"
    )
    p.add_argument(
        "--keep", type=MEMORY_ID, metavar="MEM_ID", help="the side that is right; the other is weakened"
    )
    p.add_argument("--forget", action="store_true", help="with --keep: delete the other side")
    p.add_argument("--reject-loser", action="store_true", help="with --keep: tombstone the other side")
    p.add_argument("--reason", help="why, kept in the audit log")

    p = verb(
        "promote",
        "copy a project memory into the global store",
        "hippoctl promote mem_0123456789ab",
        "hippoctl promote mem_0123456789ab -C ~/code/api",
    )
    p.add_argument("id", type=MEMORY_ID, help="the project memory to copy")

    p = verb(
        "share",
        "copy a memory to the global store with its transfer score, or --auto",
        "hippoctl share mem_0123456789ab",
        "hippoctl share --auto --min-score 0.7 --dry-run",
        "hippoctl share --team mem_0123456789ab mem_ba9876543210",
    )
    p.add_argument("id", nargs="*", type=MEMORY_ID, help="the memory to share (with --team, one or more)")
    p.add_argument("--team", action="store_true", help="queue them for the team server (see: hippoctl team)")
    p.add_argument("--force", action="store_true", help="share even below the transfer score threshold")
    p.add_argument("--auto", action="store_true", help="share every memory that scores high enough")
    p.add_argument(
        "--min-score",
        type=FRACTION,
        default=0.6,
        metavar="F",
        help="with --auto: lowest score shared (default 0.6)",
    )
    p.add_argument("--dry-run", action="store_true", help=DRY_RUN)

    verb("peers", "projects contributing to the global store", "hippoctl peers", "hippoctl peers --json")

    p = verb(
        "sync",
        "copy global memories into this project's store",
        "hippoctl sync",
        "hippoctl sync --cross-project",
    )
    p.add_argument("--cross-project", action="store_true", help="also memories another project contributed")

    p = verb(
        "workspaces",
        "the daily-run registry: workspaces list | add <dir> | remove <dir>",
        "hippoctl workspaces",
        "hippoctl workspaces add ~/code/api",
        "hippoctl workspaces remove ~/code/old",
    )
    p.add_argument(
        "action",
        choices=["list", "add", "remove"],
        nargs="?",
        default="list",
        help="list (default), add or remove",
    )
    p.add_argument("path", nargs="?", help="with add or remove: the project directory")

    verb(
        "daily-runner",
        "run the daily job now (every registered workspace, then the global store)",
        "hippoctl daily-runner",
        "hippoctl daily-runner --timeout 600",
    )


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{what} must be a number, not {text!r}") from None


def _row_id(text: str, what: str) -> int:
    """A row number from the command line: a number between 1 and SQLite's largest id."""
    value = _int(text, what)
    check(validate.id_problem(value, what))
    return value


def _conflict_id(text: str) -> int:
    try:
        return _row_id(text, "the conflict number")
    except UsageError as exc:
        # argparse turns ArgumentTypeError into its one-line usage error (exit 2).
        raise argparse.ArgumentTypeError(str(exc)) from None


def _decide(args: argparse.Namespace) -> m.Body:
    words: list[str] = args.words
    head = words[0]
    if head in ("get", "close") and len(words) == 2:
        n = _row_id(words[1], f"the decision number of decide {head}")
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
    query = utf8(" ".join(words), "the query") if words else None
    return m.Dormant(query=query, limit=args.limit)


def _audit(args: argparse.Namespace) -> m.Body:
    if args.action == "prune":
        if args.days is None:
            raise UsageError("audit prune needs --days N (0 or more)")
        return m.AuditPrune(days=args.days)
    return m.AuditList(op=args.op, since=args.since, limit=args.limit)


def _reject(args: argparse.Namespace) -> m.Body:
    if (args.id is None) == (args.value is None):
        raise UsageError("reject takes a memory id or --value, not both")
    value = None if args.value is None else read_text(args.value)
    return m.Reject(reason=utf8(args.reason, "--reason"), id=args.id, value=value)


def _invalidate(args: argparse.Namespace) -> m.Body:
    if args.pattern:
        check(validate.query_problem(args.pattern))
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
    if args.team:
        if args.auto or args.force or args.dry_run or not args.id:
            raise UsageError("share --team takes memory ids, and none of --auto, --force or --dry-run")
        return m.TeamShare(ids=list(args.id))
    if args.auto == bool(args.id) or len(args.id) > 1:
        raise UsageError("share takes one memory id or --auto, not both")
    return m.Share(
        id=args.id[0] if args.id else None,
        force=args.force,
        auto=args.auto,
        min_score=args.min_score,
        dry_run=args.dry_run,
    )


def _workspaces(args: argparse.Namespace) -> m.Body:
    if args.action == "list":
        if args.path is not None:
            raise UsageError("workspaces list takes no directory")
        return m.Workspaces(action="list")
    if args.path is None:
        raise UsageError(f"workspaces {args.action} needs a directory")
    return m.Workspaces(action=args.action, path=utf8(args.path, "the directory"))


BUILDERS: dict[str, Builder] = {
    "supersede": lambda a: m.Supersede(
        id=a.id,
        content=read_text(a.text),
        tags=tags(a.tag) if a.tag is not None else None,
        pin=a.pin,
        layer=a.layer,
    ),
    "refine": lambda a: m.Refine(id=a.id),
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


register("lifecycle", add_verbs, BUILDERS)
