"""Arguments of the HTTP side's verbs: `serve`, `dashboard`, `auth` and the webhooks' `slack` and
`github` (integrations.md §9, §10, §13)."""

from __future__ import annotations

import argparse
import os

from hippoctl.args.argcheck import Number, UsageError
from hippoctl.args.registry import AddVerb, Builder, register
from hippoctl.protocol import messages as m


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0 to 65535)")
    return int(text)


def add_verbs(verb: AddVerb) -> None:
    """Register the HTTP verbs on the hippoctl parser."""
    p = verb(
        "serve",
        "open the HTTP API inside the daemon (loopback only unless --allow-remote)",
        "hippoctl serve",
        "hippoctl serve --port 7000",
        "hippoctl serve --stop",
    )
    p.add_argument("--port", type=_port, help="the port (default: HIPPO_PORT, else daemon.json, else 6789)")
    p.add_argument("--host", help="the address to listen on (default 127.0.0.1)")
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="listen on another address than loopback; every request then needs an API key",
    )
    p.add_argument("--stop", action="store_true", help="close the listener")

    p = verb(
        "dashboard",
        "open the read-only dashboard in a browser (loopback only): memory map, conflicts, sleeps, cards",
        "hippoctl dashboard",
        "hippoctl dashboard --port 4000 --no-open",
        "hippoctl dashboard --stop",
    )
    p.add_argument("--port", type=_port, help="the port (default: daemon.json dashboard.port, else 3333)")
    p.add_argument("--no-open", action="store_true", help="print the address without opening a browser")
    p.add_argument("--stop", action="store_true", help="close the dashboard")

    p = verb(
        "team",
        "share with a team server: join <url> --key <key>, leave, status",
        "hippoctl team join https://hippo.example.com --key hk_abc.def",
        "hippoctl team status",
        "hippoctl team leave",
    )
    p.add_argument(
        "action", choices=["join", "leave", "status"], help="join a team server, leave it, or status"
    )
    p.add_argument("url", nargs="?", help="with join: the team server's base URL")
    p.add_argument("--key", help="with join: your API key on that server (from its operator)")

    p = verb(
        "auth",
        "the HTTP API's keys: create (shown once), list, revoke; token prints this user's local token",
        "hippoctl auth create --role member --label ci",
        "hippoctl auth list",
        "hippoctl auth revoke hk_abcdefghijklmnopqrstuvwx",
        "hippoctl auth token",
    )
    p.add_argument(
        "action",
        choices=["create", "list", "revoke", "token"],
        help="create, list or revoke a key; token: the local token, for a client that must prove it is you",
    )
    p.add_argument("key_id", nargs="?", metavar="key-id", help="with revoke: the key's id (hk_...)")
    p.add_argument("--tenant", help="the key's tenant (default: HIPPO_TENANT, else default)")
    p.add_argument(
        "--role", choices=["admin", "member"], default="admin", help="create: its role (default admin)"
    )
    p.add_argument("--label", help="create: a name to know it by")
    p.add_argument("--all", action="store_true", help="list: revoked keys too")

    p = verb(
        "slack",
        "the Slack webhook's backfill and dead letters",
        "hippoctl slack backfill --channel C0123456789",
        "hippoctl slack dlq list",
        "hippoctl slack dlq replay --dry-run",
        "hippoctl slack dlq replay --id 12",
    )
    p.add_argument("action", choices=["backfill", "dlq"], help="backfill a channel, or dlq list|replay")
    p.add_argument("what", nargs="?", choices=["list", "replay"], help="with dlq: list or replay")
    p.add_argument("--channel", help="backfill: the channel id (C...)")
    p.add_argument("--since", metavar="ISO", help="backfill: nothing older than this time")
    _replay_options(p)

    p = verb(
        "github",
        "the GitHub webhook's dead letters",
        "hippoctl github dlq list",
        "hippoctl github dlq list --json",
        "hippoctl github dlq replay",
    )
    p.add_argument("action", choices=["dlq"], help="dlq list|replay")
    p.add_argument("what", choices=["list", "replay"], help="list, or replay each letter once")
    _replay_options(p)


def _replay_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--id", type=Number(1), metavar="N", help="dlq replay: only the letter numbered N")
    p.add_argument(
        "--dry-run", action="store_true", help="dlq replay: say what each would do, change nothing"
    )


def _dead_letters(source: str, args: argparse.Namespace) -> m.Body:
    """`<source> dlq list` or `<source> dlq replay [--id N] [--dry-run]`."""
    if args.what == "replay":
        return m.DeadLetterReplay(source=source, id=args.id, dry_run=args.dry_run)
    if args.id is not None or args.dry_run:
        raise UsageError(f"--id and --dry-run go with {source} dlq replay")
    return m.DeadLetters(source=source)


def _serve(args: argparse.Namespace) -> m.Body:
    if args.stop and (args.port is not None or args.host or args.allow_remote):
        raise UsageError("serve --stop takes no other option")
    port = args.port
    given = os.environ.get("HIPPO_PORT", "").strip()
    if port is None and given and not args.stop:
        try:
            port = _port(given)
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"HIPPO_PORT: {exc}") from None
    return m.Serve(port=port, host=args.host, allow_remote=args.allow_remote, stop=args.stop)


def _dashboard(args: argparse.Namespace) -> m.Body:
    if args.stop:
        if args.port is not None or args.no_open:
            raise UsageError("dashboard --stop takes no other option")
        return m.DashboardStop()
    return m.DashboardStart(port=args.port)


def _auth(args: argparse.Namespace) -> m.Body:
    if args.action == "revoke":
        if not args.key_id:
            raise UsageError("auth revoke needs the key's id (hk_...)")
        return m.AuthRevoke(key_id=args.key_id, tenant=args.tenant)
    if args.key_id:
        raise UsageError(f"auth {args.action} takes no key id")
    if args.action == "create":
        return m.AuthCreate(tenant=args.tenant, role=args.role, label=args.label)
    if args.action == "token":
        if args.tenant or args.label or args.all:
            raise UsageError("auth token takes no other option")
        return m.AuthToken()
    return m.AuthList(active_only=not args.all, tenant=args.tenant)


def _slack(args: argparse.Namespace) -> m.Body:
    if args.action == "dlq":
        if args.what is None:
            raise UsageError("slack dlq needs list or replay")
        return _dead_letters("slack", args)
    if args.what is not None or args.id is not None or args.dry_run:
        raise UsageError("slack backfill takes --channel and --since")
    if not args.channel:
        raise UsageError("slack backfill needs --channel <channel id>")
    token = os.environ.get("SLACK_BOT_TOKEN", "").strip() or None
    return m.SlackBackfill(channel=args.channel, since=args.since, token=token)


def _github(args: argparse.Namespace) -> m.Body:
    return _dead_letters("github", args)


def _team(args: argparse.Namespace) -> m.Body:
    if args.action != "join":
        if args.url is not None or args.key is not None:
            raise UsageError(f"team {args.action} takes no URL or --key")
        return m.TeamLeave() if args.action == "leave" else m.TeamStatus()
    if args.url is None or not args.key:
        raise UsageError("team join needs the server's URL and --key")
    return m.TeamJoin(url=args.url, key=args.key)


BUILDERS: dict[str, Builder] = {
    "serve": _serve,
    "team": _team,
    "dashboard": _dashboard,
    "auth": _auth,
    "slack": _slack,
    "github": _github,
}

register("http", add_verbs, BUILDERS)
