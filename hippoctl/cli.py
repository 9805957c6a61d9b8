"""hippoctl: parse the verb locally, send one request, print the reply, exit with its code."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

from hippoctl import __version__
from hippoctl.args.argcheck import UsageError, count_tag_flags
from hippoctl.args.argv import is_prompt_hook
from hippoctl.client import ClientError, call, daemon_running, ping, request_envelope
from hippoctl.output import print_json
from hippoctl.protocol import errors
from hippoctl.protocol import messages as m
from hippoctl.protocol.paths import socket_path
from hippoctl.protocol.version import PROTOCOL, spoken

if TYPE_CHECKING:
    from hippoctl.progress import Bar

DEFAULT_TIMEOUT = 60.0
# A verb that waits on a model API: its calls, each retried, can take minutes before they fail.
MODEL_TIMEOUT = 300.0
# How long `daemon start` waits for a daemon that has taken its lock to answer (a first start on
# Windows, its files scanned by an antivirus, can take several seconds).
START_WAIT = 30.0
STOP_WAIT = 35.0  # the daemon's default shutdown grace (30 s) + 5 s


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
        print_json(reply.data)
    elif reply.text:
        sys.stdout.write(reply.text + "\n")
    return reply.exit_code


def _version(as_json: bool) -> int:
    daemon = ping(spawn=False)
    if as_json:
        print_json({"client": __version__, "protocol": PROTOCOL, "daemon": daemon})
        return 0
    from hippoctl.args.command import version_line

    print(version_line())
    if daemon is None:
        print("hippod: not running")
    else:
        print(
            f"hippod {daemon['version']} ({spoken(daemon['min_protocol'], daemon['protocol'])}), "
            f"pid {daemon['pid']}"
        )
    return 0


def _daemon_start(as_json: bool) -> int:
    running = ping(spawn=False)
    if running is None:
        running = ping(spawn=True, timeout=START_WAIT)
        if running is None:
            raise ClientError("hippod did not start", errors.UNREACHABLE)
        started = True
    else:
        started = False
    if as_json:
        print_json({"running": True, "started": started, "pid": running["pid"]})
    elif started:
        print(f"hippod started (pid {running['pid']})")
    else:
        print(f"hippod already running (pid {running['pid']})")
    return 0


def _wait_for_exit() -> None:
    """Wait until the daemon has let go of its locks, i.e. finished shutting down."""
    deadline = time.monotonic() + STOP_WAIT
    while daemon_running(socket_path()):
        if time.monotonic() >= deadline:
            raise ClientError(f"hippod did not stop within {STOP_WAIT:g} s", errors.FAILED)
        time.sleep(0.05)


def _stop() -> bool:
    """Stop the daemon and wait until it has; False when none was running."""
    try:
        call(request_envelope(m.Shutdown(), cwd=os.getcwd(), global_store=False), spawn=False, timeout=10.0)
    except ClientError as exc:
        if exc.exit_code != errors.UNREACHABLE:
            raise
        return False
    _wait_for_exit()
    return True


def _daemon_stop(as_json: bool) -> int:
    stopped = _stop()
    if as_json:
        print_json({"running": False, "stopped": stopped})
    else:
        print("hippod stopped" if stopped else "hippod is not running")
    return 0


def _daemon_restart(as_json: bool) -> int:
    stopped = _stop()
    if not as_json:
        print("hippod stopped" if stopped else "hippod is not running")
    return _daemon_start(as_json)


class _Progress:
    """Prints a request's progress lines; its counted steps become a bar on a terminal's stderr
    (hippoctl/progress.py) and nothing on a pipe."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.bar: Bar | None = None

    def __call__(self, progress: m.Progress) -> None:
        if progress.total is not None:
            if self.bar is None and sys.stderr.isatty():
                from hippoctl.progress import Bar

                self.bar = Bar(sys.stderr)
            if self.bar is not None:
                self.bar.update(progress)
            return
        self.clear()
        # With --json, stdout holds the reply document only.
        out = sys.stderr if self.as_json or progress.stream == "err" else sys.stdout
        print(progress.line, file=out, flush=True)

    def clear(self) -> None:
        if self.bar is not None:
            self.bar.clear()


def _help(topic: str | None) -> int:
    """`hippoctl help [verb]`: the verb's --help, or every verb's list."""
    from hippoctl.args.command import VERB_NAMES, build_parser, unknown_verb, verb_help

    if topic is None:
        sys.stdout.write(build_parser().format_help())
        return 0
    if topic not in VERB_NAMES:
        raise UsageError(unknown_verb(topic))
    sys.stdout.write(verb_help(topic))
    return 0


def run(argv: list[str]) -> int:
    if is_prompt_hook(argv):
        # The per-prompt hook runs before every prompt: it parses its own few flags, and every other
        # verb's arguments are left unloaded.
        from hippoctl import prompt_hook

        return prompt_hook.main(argv)
    from hippoctl.args.command import build_body, build_parser, wants_json
    from hippoctl.args.ingest import HOOK_VERBS
    from hippoctl.args.parser import NO_JSON_VERBS, no_json

    count_tag_flags(argv)
    parser = build_parser(argv)
    args = parser.parse(argv)
    opts: dict[str, Any] = {
        "global_store": False,
        "directory": None,
        "no_spawn": False,
        "timeout": None,
    }
    opts.update({k: v for k, v in vars(args).items() if k in opts})
    opts["json"] = wants_json(args)
    if args.verb is None:
        raise UsageError("a verb is required; see hippoctl --help")
    if opts["json"] and args.verb in NO_JSON_VERBS:
        raise UsageError(no_json(args.verb))
    if args.verb == "help":
        return _help(args.topic)
    spawn = not opts["no_spawn"] and os.environ.get("HIPPO_NO_SPAWN", "").strip() != "1"
    if args.verb == "version":
        return _version(opts["json"])
    body: m.Body
    if args.verb == "daemon":
        if args.action == "start":
            return _daemon_start(opts["json"])
        if args.action == "stop":
            return _daemon_stop(opts["json"])
        if args.action == "restart":
            return _daemon_restart(opts["json"])
        if args.socket_activation and args.action != "install-service":
            raise UsageError("--socket-activation goes with daemon install-service")
        if args.action == "install-service":
            body = m.ServiceInstall(socket_activation=args.socket_activation)
        elif args.action == "uninstall-service":
            body = m.ServiceUninstall()
        else:
            body, spawn = m.DaemonStatus(), False
    cwd = os.getcwd()
    if opts["directory"] is not None:
        cwd = os.path.realpath(opts["directory"])
        if not os.path.isdir(cwd):
            raise UsageError(f"-C {opts['directory']}: no such directory")
    if args.verb == "watch":
        # Imported here: most calls are not `watch`, and every import costs each hook call.
        from hippoctl import watch

        return watch.run(args.command, cwd=cwd, global_store=opts["global_store"], spawn=spawn)
    if args.verb == "mcp":
        # Imported here only: the MCP SDK costs most of a second to import.
        from hippoctl import mcp_server

        return mcp_server.run(cwd=cwd, global_store=opts["global_store"], spawn=spawn)
    if args.verb == "doctor":
        from hippoctl import doctor

        return doctor.run(cwd=cwd, global_store=opts["global_store"], spawn=spawn, as_json=opts["json"])
    if args.verb == "support-bundle":
        from hippoctl import support_bundle

        return support_bundle.write_bundle(
            cwd=cwd,
            global_store=opts["global_store"],
            out=args.out,
            include_logs=args.include_logs,
            as_json=opts["json"],
        )
    if args.verb == "refine":
        from hippoctl import refine

        return refine.run(
            args.id,
            yes=args.yes,
            dry_run=args.dry_run,
            as_json=opts["json"],
            cwd=cwd,
            global_store=opts["global_store"],
            spawn=spawn,
            timeout=opts["timeout"] if opts["timeout"] is not None else MODEL_TIMEOUT,
        )
    if args.verb != "daemon":
        body = build_body(args)
    request = request_envelope(body, cwd=cwd, global_store=opts["global_store"])
    if args.verb in HOOK_VERBS:
        from hippoctl import hook

        return hook.run(args.verb, request, spawn=spawn, strict=args.strict, as_json=opts["json"])
    timeout = opts["timeout"] if opts["timeout"] is not None else DEFAULT_TIMEOUT
    on_progress = _Progress(opts["json"])
    try:
        reply = call(request, spawn=spawn, timeout=timeout, on_progress=on_progress)
        if isinstance(reply, m.Error) and reply.code == "shutting_down" and spawn:
            # The daemon was stopping: let it finish, then start a fresh one, once (daemon.md §9).
            _wait_for_exit()
            reply = call(request, spawn=True, timeout=timeout, on_progress=on_progress)
    finally:
        on_progress.clear()
    code = _print_reply(reply, opts["json"])
    if args.verb == "dashboard" and not (args.stop or args.no_open) and isinstance(reply, m.Result):
        from hippoctl import browser

        browser.open_page(str(reply.data["url"]))
    return code


def _utf8_pipes() -> None:
    """On Windows, write UTF-8 where output goes to a pipe or file, as agent hosts read hooks' output
    (a console gets Unicode from Python whatever its code page)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and not stream.isatty() and hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8", errors="replace")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `hippoctl` console script."""
    if sys.platform == "win32":
        _utf8_pipes()
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        from hippoctl import colour

        eprint(f"hippoctl: {colour.paint('error:', colour.RED, colour.enabled(sys.stderr))} {exc}")
        return errors.USAGE
    except ClientError as exc:
        eprint(f"hippoctl: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        return errors.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
