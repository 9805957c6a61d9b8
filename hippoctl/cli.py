"""hippoctl: parse the verb locally, send one request, print the reply, exit with its code."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, NoReturn, TypeVar

import msgspec

from hippoctl import __version__
from hippoctl.client import ClientError, call, daemon_holds_lock, ping, request_envelope
from hippoctl.protocol import errors, validate
from hippoctl.protocol import messages as m
from hippoctl.protocol.paths import socket_path
from hippoctl.protocol.version import PROTOCOL

DEFAULT_TIMEOUT = 60.0
STOP_WAIT = 35.0  # the daemon's default shutdown grace (30 s) + 5 s


class UsageError(Exception):
    """Bad arguments: exit 2 without contacting the daemon."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _common(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS keeps a subcommand's unset option from overwriting one given before the verb.
    s = argparse.SUPPRESS
    parser.add_argument(
        "--global", dest="global_store", action="store_true", default=s, help="use the global store"
    )
    parser.add_argument("-C", dest="directory", metavar="DIR", default=s, help="act as if run from DIR")
    parser.add_argument("--no-spawn", action="store_true", default=s, help="never start the daemon")
    parser.add_argument("--timeout", type=float, default=s, metavar="S", help="seconds to wait for a reply")
    parser.add_argument("--json", action="store_true", default=s, help="print the reply data as JSON")


def build_parser() -> Parser:
    parser = Parser(prog="hippoctl", description="Agent memory that learns what is wrong.")
    _common(parser)
    verbs = parser.add_subparsers(dest="verb", metavar="<verb>", parser_class=Parser)

    def verb(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = verbs.add_parser(name, help=help_text, description=help_text)
        _common(sub)
        return sub

    verb("init", "create a store: .hippo/ here, or the global store with --global")

    p = verb("remember", "store one memory ('-' reads the text from stdin)")
    p.add_argument("text")
    p.add_argument("--tag", action="append", default=[], metavar="T")
    p.add_argument("--error", action="store_true", help="an error lesson: tag error, double half-life")
    p.add_argument("--pin", action="store_true", help="never decays; injected on every prompt")
    tier = p.add_mutually_exclusive_group()
    for name in ("verified", "observed", "inferred"):
        tier.add_argument(f"--{name}", dest="confidence", action="store_const", const=name)
    p.add_argument("--scope")
    p.add_argument("--owner", help="user:<id> or agent:<id>")
    p.add_argument("--artifact-ref", metavar="URI")

    p = verb("recall", "ranked retrieval from the project and global stores")
    p.add_argument("query")
    p.add_argument("--budget", type=int, help="token budget (default 4000)")
    p.add_argument("--limit", type=int)
    p.add_argument("--min-results", type=int, default=1)
    p.add_argument("--why", action="store_true", help="show how each score was made")
    p.add_argument("--scope")
    p.add_argument("--local-bump", type=float, metavar="F")
    p.add_argument("--equal-sources", action="store_true")
    p.add_argument("--include-superseded", action="store_true")

    p = verb("inspect", "every field of a memory and its live strength math")
    p.add_argument("id")

    p = verb("forget", "delete one memory")
    p.add_argument("id")
    p.add_argument("--archive", action="store_true", help="archive a raw row instead")
    p.add_argument("--reason")

    p = verb("outcome", "mark the last recalled batch (or --id) good or bad")
    mark = p.add_mutually_exclusive_group(required=True)
    mark.add_argument("--good", dest="good", action="store_true")
    mark.add_argument("--bad", dest="good", action="store_false")
    p.add_argument("--id")

    verb("status", "store health: counts, strengths, at-risk, last sleep")

    p = verb("embed", "embed every memory lacking a current vector (needs the hippod[embed] extra)")
    p.add_argument("--status", action="store_true", help="only show how many memories have one")
    verb("version", "client and daemon versions and protocols")

    p = verb("daemon", "control and inspect the daemon")
    p.add_argument("action", choices=["start", "stop", "restart", "status"])
    return parser


def _read_text(text: str) -> str:
    if text == "-":
        # One byte past the limit is enough to know the text is too long.
        data = sys.stdin.buffer.read(validate.MAX_CONTENT_BYTES + 1)
        text = data.decode("utf-8", errors="replace")
    stripped = text.strip()
    _check(validate.content_problem(stripped))
    return stripped


def _check(problem: str | None) -> None:
    if problem is not None:
        raise UsageError(problem)


_Text = TypeVar("_Text", str, None)


def _utf8(value: _Text, name: str) -> _Text:
    """Refuse arguments that cannot be sent (bytes the shell passed that are not UTF-8)."""
    try:
        if value is not None:
            value.encode()
    except UnicodeEncodeError:
        raise UsageError(f"{name} is not valid UTF-8") from None
    return value


def build_body(args: argparse.Namespace) -> m.Body:
    """The request body for a store verb; raises UsageError for arguments the daemon would refuse."""
    verb = args.verb
    if verb == "init":
        return m.Init()
    if verb == "remember":
        _check(validate.owner_problem(args.owner))
        _check(validate.artifact_ref_problem(args.artifact_ref))
        return m.Remember(
            content=_read_text(args.text),
            tags=[_utf8(t, "--tag") for t in args.tag],
            error=args.error,
            pin=args.pin,
            confidence=args.confidence,
            scope=_utf8(args.scope, "--scope"),
            owner=_utf8(args.owner, "--owner"),
            artifact_ref=_utf8(args.artifact_ref, "--artifact-ref"),
        )
    if verb == "recall":
        _check(validate.query_problem(_utf8(args.query, "the query")))
        for name in ("budget", "limit", "min_results"):
            value = getattr(args, name)
            if value is not None and value < 0:
                raise UsageError(f"--{name.replace('_', '-')} must be 0 or more")
        return m.Recall(
            query=args.query,
            budget=args.budget,
            limit=args.limit,
            min_results=args.min_results,
            why=args.why,
            local_bump=args.local_bump,
            equal_sources=args.equal_sources,
            include_superseded=args.include_superseded,
            scope=args.scope,
        )
    if verb == "inspect":
        return m.Inspect(id=args.id)
    if verb == "forget":
        if args.archive and not args.reason:
            raise UsageError("--archive needs --reason")
        return m.Forget(id=args.id, archive=args.archive, reason=args.reason)
    if verb == "outcome":
        return m.Outcome(good=args.good, id=args.id)
    if verb == "status":
        return m.Status()
    if verb == "embed":
        return m.Embed(status_only=args.status)
    raise UsageError(f"unknown verb {verb}")


def eprint(text: str) -> None:
    print(text, file=sys.stderr)


def _print_reply(reply: m.Result | m.Error, as_json: bool) -> int:
    if isinstance(reply, m.Error):
        line = f"hippoctl: {reply.message}"
        if reply.hint:
            line += f" (try: {reply.hint})"
        eprint(line)
        return reply.exit_code or errors.exit_code_for(reply.code)
    for warning in reply.warnings:
        eprint(warning)
    if as_json:
        sys.stdout.write(msgspec.json.encode(reply.data if reply.data is not None else {}).decode() + "\n")
    elif reply.text:
        sys.stdout.write(reply.text + "\n")
    return reply.exit_code


def _version(as_json: bool) -> int:
    daemon = ping(spawn=False)
    if as_json:
        data = {"client": __version__, "protocol": PROTOCOL, "daemon": daemon}
        sys.stdout.write(msgspec.json.encode(data).decode() + "\n")
        return 0
    print(f"hippoctl {__version__} (protocol {PROTOCOL})")
    if daemon is None:
        print("hippod: not running")
    else:
        print(
            f"hippod {daemon['version']} (protocol {daemon['min_protocol']}-{daemon['protocol']}), "
            f"pid {daemon['pid']}"
        )
    return 0


def _daemon_start() -> int:
    running = ping(spawn=False)
    if running is not None:
        print(f"hippod already running (pid {running['pid']})")
        return 0
    started = ping(spawn=True)
    if started is None:
        raise ClientError("hippod did not start", errors.UNREACHABLE)
    print(f"hippod started (pid {started['pid']})")
    return 0


def _wait_for_exit() -> None:
    """Wait until the daemon has let go of its lock, i.e. finished shutting down."""
    deadline = time.monotonic() + STOP_WAIT
    while daemon_holds_lock(socket_path()):
        if time.monotonic() >= deadline:
            raise ClientError(f"hippod did not stop within {STOP_WAIT:g} s", errors.FAILED)
        time.sleep(0.05)


def _daemon_stop() -> int:
    try:
        call(request_envelope(m.Shutdown(), cwd=os.getcwd(), global_store=False), spawn=False, timeout=10.0)
    except ClientError as exc:
        if exc.exit_code != errors.UNREACHABLE:
            raise
        print("hippod is not running")
        return 0
    _wait_for_exit()
    print("hippod stopped")
    return 0


def _print_progress(progress: m.Progress) -> None:
    print(progress.line, file=sys.stderr if progress.stream == "err" else sys.stdout, flush=True)


def _print_progress_json(progress: m.Progress) -> None:
    # With --json, stdout holds the reply document only.
    print(progress.line, file=sys.stderr, flush=True)


def run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    opts: dict[str, Any] = {
        "global_store": False,
        "directory": None,
        "no_spawn": False,
        "timeout": None,
        "json": False,
    }
    opts.update({k: v for k, v in vars(args).items() if k in opts})
    if args.verb is None:
        raise UsageError("a verb is required; see hippoctl --help")
    spawn = not opts["no_spawn"] and os.environ.get("HIPPO_NO_SPAWN", "").strip() != "1"
    if args.verb == "version":
        return _version(opts["json"])
    if args.verb == "daemon":
        body: m.Body
        if args.action == "start":
            return _daemon_start()
        if args.action == "stop":
            return _daemon_stop()
        if args.action == "restart":
            _daemon_stop()
            return _daemon_start()
        body, spawn = m.DaemonStatus(), False
    else:
        body = build_body(args)
    cwd = os.getcwd()
    if opts["directory"] is not None:
        cwd = os.path.realpath(opts["directory"])
        if not os.path.isdir(cwd):
            raise UsageError(f"-C {opts['directory']}: no such directory")
    request = request_envelope(body, cwd=cwd, global_store=opts["global_store"])
    timeout = opts["timeout"] if opts["timeout"] is not None else DEFAULT_TIMEOUT
    if timeout <= 0:
        raise UsageError("--timeout must be more than 0 seconds")
    on_progress = _print_progress_json if opts["json"] else _print_progress
    reply = call(request, spawn=spawn, timeout=timeout, on_progress=on_progress)
    if isinstance(reply, m.Error) and reply.code == "shutting_down" and spawn:
        # The daemon was stopping: let it finish, then start a fresh one, once (daemon.md §9).
        _wait_for_exit()
        reply = call(request, spawn=True, timeout=timeout, on_progress=on_progress)
    return _print_reply(reply, opts["json"])


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `hippoctl` console script."""
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        eprint(f"hippoctl: error: {exc}")
        return errors.USAGE
    except ClientError as exc:
        eprint(f"hippoctl: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        return errors.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
