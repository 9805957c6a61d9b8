"""The per-prompt hook, `hippoctl context --pinned-only ...` (recall.md §9, pinned injection).

Claude Code runs it before every prompt and waits for it, so it parses its few flags by hand, reads the
host's JSON from stdin, asks the daemon once within the hook budget and prints the daemon's text. It is
never spooled (a stale block is useless) and, unless `--strict`, any fault leaves stdout empty and exit 0:
a UserPromptSubmit hook that exits 2 would block the user's prompt.
"""

from __future__ import annotations

import os
import sys
import time

import msgspec

from hippoctl import hook
from hippoctl.args.argcheck import COUNT, SECONDS, Number, UsageError
from hippoctl.client import ClientError, call, request_envelope
from hippoctl.protocol import errors
from hippoctl.protocol import messages as m

VERB = "context"
FLAG = "--pinned-only"
FORMATS = ("markdown", "json", "additional-context")


class HookUsageError(Exception):
    """The command line cannot be understood."""


class Options(msgspec.Struct):
    include_recent: int = 0
    format: str = "markdown"
    budget: int | None = None
    scope: str | None = None
    strict: bool = False
    global_store: bool = False
    directory: str | None = None
    no_spawn: bool = False


def _number(rule: Number, flag: str, value: str) -> float:
    """A numeric flag, checked by the rule every verb's numeric options follow (argcheck.Number)."""
    try:
        return rule.parse(value, flag)
    except UsageError as exc:
        raise HookUsageError(str(exc)) from None


def parse(argv: list[str]) -> Options:
    """The hook's flags, before or after the verb; anything else is a usage error."""
    opts = Options()
    args = iter(argv)
    seen_verb = False
    for arg in args:
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")

        def take(flag: str = name, eq: str = eq, inline: str = inline) -> str:
            if eq:
                return inline
            got = next(args, None)
            if got is None:
                raise HookUsageError(f"{flag} needs a value")
            return got

        if arg == VERB and not seen_verb:
            seen_verb = True
        elif arg in (FLAG, "--strict", "--global", "--no-spawn"):
            opts.strict = opts.strict or arg == "--strict"
            opts.global_store = opts.global_store or arg == "--global"
            opts.no_spawn = opts.no_spawn or arg == "--no-spawn"
        elif name == "--include-recent":
            opts.include_recent = int(_number(COUNT, name, take()))
        elif name == "--budget":
            opts.budget = int(_number(COUNT, name, take()))
        elif name == "--format":
            opts.format = take()
            if opts.format not in FORMATS:
                raise HookUsageError(f"--format must be one of {', '.join(FORMATS)}, not {opts.format!r}")
        elif name == "--scope":
            opts.scope = take() or None
        elif name == "-C":
            opts.directory = take()
        elif name == "--timeout":
            _number(
                SECONDS, name, take()
            )  # the hook's own wall budget (HIPPO_HOOK_TIMEOUT_MS) bounds the call instead
        else:
            raise HookUsageError(f"context --pinned-only does not take {arg!r}")
    return opts


def _cwd(opts: Options, payload: object) -> str:
    """-C, else the host's `cwd` when it is a directory, else this process's."""
    if opts.directory is not None:
        path = os.path.realpath(opts.directory)
        if not os.path.isdir(path):
            raise HookUsageError(f"-C {opts.directory}: no such directory")
        return path
    given = payload.get("cwd") if isinstance(payload, dict) else None
    if isinstance(given, str) and given and os.path.isdir(given):
        return os.path.realpath(given)
    return os.getcwd()


def _fault(strict: bool, message: str, code: int) -> int:
    """A fault ends the hook quietly with exit 0; `--strict` reports it and exits with its code."""
    if strict:
        print(f"hippoctl: {message}", file=sys.stderr)
        return code
    return 0


def main(argv: list[str]) -> int:
    """Run the hook for argv (the arguments after the program name); returns the exit code."""
    try:
        return _run(argv)
    except Exception as exc:
        # Whatever went wrong (a deleted cwd, an unreadable stdin), the host gets no traceback and
        # no non-zero exit: a failed UserPromptSubmit hook would get in the way of the user's prompt.
        return _fault("--strict" in argv, f"the per-prompt hook failed: {exc!r}", errors.FAILED)


def _run(argv: list[str]) -> int:
    deadline = time.monotonic() + hook.budget_seconds(VERB)
    strict = "--strict" in argv
    try:
        opts = parse(argv)
        payload = hook.decode_payload(hook.read_stdin(deadline))
        cwd = _cwd(opts, payload)
    except (HookUsageError, hook.BadPayload) as exc:
        if strict:
            print(f"hippoctl: error: {exc}", file=sys.stderr)
            return errors.USAGE
        return 0
    body = m.Context(
        pinned_only=True,
        include_recent=opts.include_recent,
        format=opts.format,
        budget=opts.budget,
        scope=opts.scope,
        payload=payload,
    )
    request = request_envelope(body, cwd=cwd, global_store=opts.global_store)
    spawn = not opts.no_spawn and os.environ.get("HIPPO_NO_SPAWN", "").strip() != "1"
    try:
        reply = call(
            request,
            spawn=spawn,
            timeout=max(0.05, deadline - time.monotonic()),
            deadline=deadline,
            settle=False,
        )
    except ClientError as exc:
        return _fault(strict, str(exc), exc.exit_code)
    except OSError as exc:
        # Starting the daemon failed (its interpreter gone, no processes left): unreachable, not a crash.
        return _fault(strict, f"could not reach hippod: {exc}", errors.UNREACHABLE)
    if isinstance(reply, m.Error):
        return _fault(strict, reply.message, reply.exit_code or errors.exit_code_for(reply.code))
    if reply.text:
        sys.stdout.write(reply.text + "\n")
    return 0
