"""Arguments of the verbs that plug hippod into agents and the OS: init, setup, hook, mcp, doctor,
support-bundle (integrations.md) and `daemon install-service|uninstall-service` (daemon.md §14)."""

from __future__ import annotations

import argparse
import os

from hippoctl.args.argcheck import DAYS, UsageError
from hippoctl.args.ingest import absolute
from hippoctl.args.registry import AddVerb, Builder, register
from hippoctl.protocol import messages as m
from hippoctl.protocol.mcp_names import TOOL_NAMES

# Verbs the client runs itself (they talk to the daemon in their own way, or not at all).
CLIENT_VERBS = frozenset({"mcp", "doctor", "support-bundle"})


def add_verbs(verb: AddVerb) -> None:
    """Register the integration verbs on the hippoctl parser."""
    p = verb(
        "init",
        "create a store here (or --global), seed it and wire the agents found",
        "hippoctl init",
        "hippoctl init --no-hooks --days 90",
        "hippoctl init --scan ~/code",
    )
    p.add_argument("--scan", metavar="DIR", help="a store for every git repository below DIR")
    p.add_argument("--days", type=DAYS, metavar="N", help="days of git history to learn from (default 30)")
    p.add_argument("--no-hooks", action="store_true", help="wire no agent")
    p.add_argument("--no-schedule", action="store_true", help="no daily run, no per-user service")
    p.add_argument("--no-learn", action="store_true", help="learn nothing from git or agent notes")

    p = verb(
        "setup",
        "machine-level wiring: user-level hooks, the service, the global store",
        "hippoctl setup --dry-run",
        "hippoctl setup --all",
    )
    p.add_argument("--all", action="store_true", help="also refresh blocks in every registered workspace")
    p.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    p.add_argument("--no-schedule", action="store_true", help="install no per-user service")

    p = verb(
        "hook",
        "manage instruction blocks and agent hooks",
        "hippoctl hook list",
        "hippoctl hook install claude-code",
        "hippoctl hook uninstall codex",
    )
    p.add_argument(
        "action", choices=["list", "install", "uninstall"], help="list every target, install or uninstall one"
    )
    p.add_argument("target", nargs="?", choices=m.HOOK_TARGETS, help="with install or uninstall: the agent")

    verb(
        "mcp",
        f"MCP server over stdio ({len(TOOL_NAMES)} tools)",
        "hippoctl mcp",
        "hippoctl mcp --global",
    )
    verb(
        "doctor",
        "read-only check of the install; each problem names its fix",
        "hippoctl doctor",
        "hippoctl doctor --json",
    )
    p = verb(
        "support-bundle",
        "a redacted diagnostic JSON file, never memory text",
        "hippoctl support-bundle",
        "hippoctl support-bundle --out /tmp/hippo-support.json --include-logs",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="the file, or a folder, to write it to (default: hippo-support-<date>.json under the "
        "global store's support/ folder)",
    )
    p.add_argument("--include-logs", action="store_true", help="append the last 200 lines of each log")


def _command() -> str:
    # Imported here: only the verbs that install hooks need shutil and friends.
    from hippoctl.selfcommand import hook_command

    return hook_command()


def _init(args: argparse.Namespace) -> m.Body:
    scan = None
    if args.scan is not None:
        scan = os.path.realpath(absolute(args, args.scan, "--scan"))  # against -C's directory
        if not os.path.isdir(scan):
            raise UsageError(f"--scan {args.scan}: no such directory")
    return m.Init(
        command=_command(),
        scan=scan,
        days=args.days,
        no_hooks=args.no_hooks,
        no_schedule=args.no_schedule,
        no_learn=args.no_learn,
    )


def _setup(args: argparse.Namespace) -> m.Body:
    return m.Setup(command=_command(), all=args.all, dry_run=args.dry_run, no_schedule=args.no_schedule)


def _hook(args: argparse.Namespace) -> m.Body:
    if args.action == "list":
        if args.target is not None:
            raise UsageError("hook list takes no target")
        return m.HookList(command=_command())
    if args.target is None:
        raise UsageError(f"hook {args.action} needs a target: {', '.join(m.HOOK_TARGETS)}")
    if args.action == "install":
        return m.HookInstall(target=args.target, command=_command())
    return m.HookUninstall(target=args.target)


BUILDERS: dict[str, Builder] = {
    "init": _init,
    "setup": _setup,
    "hook": _hook,
}

register("integrations", add_verbs, BUILDERS)
