"""Hook verbs (daemon.md §10.5): read the host's JSON from stdin, answer within a wall budget, and
never fail the host. Spoolable verbs write their request to the spool when the daemon cannot answer."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time

import msgspec

from hippoctl.client import ClientError, call
from hippoctl.output import print_json
from hippoctl.protocol import errors, spool, validate
from hippoctl.protocol import messages as m

DEFAULT_BUDGET_MS = 4000
# Compaction hooks read transcripts and write snapshots; compact-resume prints one back.
VERB_BUDGET_MS = {"pre-compact": 25_000, "post-compact": 25_000, "compact-resume": 8_000}
# Replies that mean "not done, try later": the request is spooled rather than dropped (a daemon
# outdated by an upgrade in place replays it once restarted).
RETRY_LATER = frozenset({"shutting_down", "unsupported_request", "protocol_mismatch", errors.DAEMON_OUTDATED})


def budget_seconds(verb: str, environ: dict[str, str] | os._Environ[str] | None = None) -> float:
    """The verb's total wall budget: HIPPO_HOOK_TIMEOUT_MS when a positive finite number, else its default.

    The variable applies to every hook verb, so one setting bounds all of a host's hooks.
    """
    env = os.environ if environ is None else environ
    raw = env.get("HIPPO_HOOK_TIMEOUT_MS", "").strip()
    try:
        value = float(raw) if raw else 0.0
    except ValueError:
        value = 0.0
    if not math.isfinite(value) or value <= 0:
        value = VERB_BUDGET_MS.get(verb, DEFAULT_BUDGET_MS)
    return value / 1000.0


def read_stdin(deadline: float, limit: int = spool.MAX_STDIN_BYTES) -> bytes | None:
    """Up to `limit` bytes of stdin, or None when it is a TTY or absent.

    Reading stops at end of input, at the limit, or at the deadline: a host that keeps
    stdin open without writing must not hold the hook past its budget.
    """
    if sys.stdin is None:
        return None
    try:
        fd = sys.stdin.fileno()
    except (OSError, ValueError):
        return None
    if os.isatty(fd):
        return None
    if sys.platform == "win32":
        return _read_by_thread(fd, deadline, limit)
    import select

    chunks: list[bytes] = []
    size = 0
    while size < limit:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except (OSError, ValueError):
            break
        if not ready:
            break
        chunk = os.read(fd, min(65536, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _read_by_thread(fd: int, deadline: float, limit: int) -> bytes:
    """Windows has no select() on a pipe: a thread reads, and what it has by the deadline is used."""
    import threading

    chunks: list[bytes] = []

    def read() -> None:
        size = 0
        with contextlib.suppress(OSError):
            while size < limit:
                chunk = os.read(fd, min(65536, limit - size))
                if not chunk:
                    return
                chunks.append(chunk)
                size += len(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(max(0.0, deadline - time.monotonic()))
    return b"".join(list(chunks))


class BadPayload(ValueError):
    """The host's input can never be used; the message says why."""


def decode_payload(data: bytes | None) -> object:
    """The host's JSON as parsed, the raw text when it is not JSON, or None when there was no input.

    Raises BadPayload for bytes that are not UTF-8, and for JSON holding a string UTF-8 cannot carry
    (a lone surrogate escape such as \\ud800): both are refused, as in an argument.
    """
    if not data:
        return None
    problem = validate.utf8_problem(data, "the input")
    if problem is not None:
        raise BadPayload(problem)
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:
        pass
    import json  # only on this path: the standard parser accepts lone surrogates, so it can name one

    try:
        lone = _lone_surrogate(json.loads(data))
    except ValueError:
        lone = None
    if lone is not None:
        raise BadPayload(f"the input holds the escape \\u{lone:04x}, a lone surrogate, not valid UTF-8")
    return data.decode("utf-8")


def _lone_surrogate(value: object) -> int | None:
    """The first code point in U+D800-U+DFFF in a parsed JSON value's keys and strings."""
    if isinstance(value, str):
        return next((ord(c) for c in value if "\ud800" <= c <= "\udfff"), None)
    items: list[object] = []
    if isinstance(value, dict):
        items = [part for pair in value.items() for part in pair]
    elif isinstance(value, list):
        items = value
    return next((found for item in items if (found := _lone_surrogate(item)) is not None), None)


def attach(body: m.Body, payload: object, key: str | None) -> None:
    """Put the host's input and the request key on a hook request body that has room for them."""
    if hasattr(body, "payload"):
        body.payload = payload
    if key is not None and hasattr(body, "spool_key"):
        body.spool_key = key


def _spool_document(verb: str, request: m.Request, argv: list[str], stdin: object) -> spool.SpoolFile:
    return spool.SpoolFile(
        v=spool.VERSION,
        kind=verb,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        cwd=request.cwd,
        env=dict(request.env),
        argv=argv,
        stdin=stdin,
    )


def spool_request(verb: str, name: str, request: m.Request, argv: list[str], payload: object) -> str:
    """Write the request as a spool file (ingest.md §8) and return its path."""
    return spool.write(spool.global_root(), name, _spool_document(verb, request, argv, payload))


def refuse_payload(verb: str, request: m.Request, argv: list[str], data: bytes, problem: str) -> str | None:
    """Keep an input that can never be applied in the spool's failed/ folder with the reason (the
    spoolable verbs), so it is neither sent nor lost without a word; returns where it went."""
    if verb not in spool.KINDS:
        return None
    # The bytes as they came, each one that is not UTF-8 written as \xNN.
    document = _spool_document(verb, request, argv, data.decode("utf-8", errors="backslashreplace"))
    try:
        return spool.write_failed(spool.global_root(), spool.new_name(), document, problem)
    except OSError:
        return None


def run(
    verb: str,
    request: m.Request,
    *,
    spawn: bool,
    strict: bool,
    argv: list[str] | None = None,
    as_json: bool = False,
) -> int:
    """Send one hook request within the verb's budget; spool it when the daemon cannot answer in time.

    Prints the reply's text (most hook verbs have none), or its data with `as_json`, and exits 0 on
    any fault, unless `strict`.
    """
    deadline = time.monotonic() + budget_seconds(verb)
    data = read_stdin(deadline)
    try:
        payload = decode_payload(data)
    except BadPayload as exc:
        kept = refuse_payload(
            verb, request, list(sys.argv[1:] if argv is None else argv), data or b"", str(exc)
        )
        if strict:
            where = f"; kept in {kept}" if kept is not None else ""
            print(f"hippoctl: {verb}: {exc}{where}", file=sys.stderr)
            return errors.USAGE
        return 0
    spoolable = verb in spool.KINDS
    name = spool.new_name() if spoolable else None
    attach(request.body, payload, spool.key_of(name) if name else None)
    failure: ClientError | None = None
    try:
        reply = call(
            request,
            spawn=spawn,
            timeout=max(0.05, deadline - time.monotonic()),
            deadline=deadline,
            settle=False,
        )
    except ClientError as exc:
        failure = exc
    except OSError as exc:
        # Starting the daemon failed (its interpreter gone, no processes left): unreachable, not a crash.
        failure = ClientError(f"could not reach hippod: {exc}", errors.UNREACHABLE)
    else:
        if isinstance(reply, m.Error) and reply.code in RETRY_LATER:
            failure = ClientError(reply.message, reply.exit_code or errors.exit_code_for(reply.code))
        elif isinstance(reply, m.Error):
            if strict:
                print(f"hippoctl: {reply.message}", file=sys.stderr)
                return reply.exit_code or errors.exit_code_for(reply.code)
            return 0
        elif as_json:
            print_json(reply.data if reply.data is not None else {})
            return 0
        elif reply.text:
            sys.stdout.write(reply.text + "\n")
            return 0
        else:
            return 0
    if spoolable and name is not None:
        try:
            path = spool_request(verb, name, request, list(sys.argv[1:] if argv is None else argv), payload)
        except OSError as exc:
            if strict:
                print(f"hippoctl: could not write the spool file: {exc}", file=sys.stderr)
                return errors.FAILED
            return 0
        if strict:
            raise ClientError(f"{failure}; the request waits in {path}", failure.exit_code)
    if strict:
        raise failure
    return 0
