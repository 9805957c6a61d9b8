"""Hook verbs (daemon.md §10.5): read the host's JSON from stdin, answer within a wall budget, and
never fail the host. Spoolable verbs write their request to the spool when the daemon cannot answer."""

from __future__ import annotations

import sys

import msgspec

from hippoctl.args_ingest import MAX_HOOK_STDIN_BYTES
from hippoctl.client import ClientError, call
from hippoctl.protocol import messages as m


def read_payload() -> object:
    """The host's JSON from stdin (not read from a TTY), or the raw text when it is not JSON."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    data = sys.stdin.buffer.read(MAX_HOOK_STDIN_BYTES)
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError:
        return data.decode("utf-8", errors="replace")


def run(verb: str, request: m.Request, *, spawn: bool, strict: bool) -> int:
    """Send one hook request; prints nothing and exits 0 on any fault unless `strict`."""
    if isinstance(request.body, m.CaptureError):
        request.body.payload = read_payload()
    try:
        reply = call(request, spawn=spawn, timeout=4.0)
    except ClientError:
        if strict:
            raise
        return 0
    if isinstance(reply, m.Error):
        if strict:
            print(f"hippoctl: {reply.message}", file=sys.stderr)
            return reply.exit_code
        return 0
    if reply.text:
        sys.stdout.write(reply.text + "\n")
    return 0
