"""Spool files and the hook requests they stand for (ingest.md §8), each turned into the other.

The replayer rebuilds a request from a file; a hook job that must outlive the daemon (a session
end) is written down as the file the client would have spooled, so that a crash or a stop before
the job is done leaves it to be replayed at the next start.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from hippoctl.protocol import messages as m
from hippoctl.protocol import spool


class NotReplayable(ValueError):
    """A spool file that no number of tries will apply; the message says why."""


def _capture_error(document: spool.SpoolFile, key: str) -> m.Body:
    return m.CaptureError(payload=document.stdin, spool_key=key)


def _pre_compact(document: spool.SpoolFile, key: str) -> m.Body:
    return m.PreCompact(payload=document.stdin, spool_key=key)


def _post_compact(document: spool.SpoolFile, key: str) -> m.Body:
    return m.PostCompact(payload=document.stdin, spool_key=key)


def _session_end(document: spool.SpoolFile, key: str) -> m.Body:
    offset: int | None = None
    argv = document.argv
    for i, arg in enumerate(argv):
        raw: str | None = None
        if arg.startswith("--codex-offset="):
            raw = arg.split("=", 1)[1]
        elif arg == "--codex-offset" and i + 1 < len(argv):
            raw = argv[i + 1]
        if raw is not None:
            if not raw.isdigit():
                raise NotReplayable(f"--codex-offset {raw!r} is not a byte offset")
            offset = int(raw)
    return m.SessionEnd(payload=document.stdin, spool_key=key, codex_offset=offset, once="--once" in argv)


# How each kind becomes a request body again.
BUILDERS: dict[str, Callable[[spool.SpoolFile, str], m.Body]] = {
    "capture-error": _capture_error,
    "pre-compact": _pre_compact,
    "post-compact": _post_compact,
    "session-end": _session_end,
}


def request_for(document: spool.SpoolFile, folder: str, key: str) -> m.Request:
    """The request a spool file stands for; raises NotReplayable when it cannot be rebuilt."""
    if document.kind != folder:
        raise NotReplayable(f"kind {document.kind!r} does not match its folder {folder!r}")
    builder = BUILDERS.get(document.kind)
    if builder is None:
        raise NotReplayable(f"unknown kind {document.kind!r}")
    if not os.path.isabs(document.cwd):
        raise NotReplayable("cwd is not an absolute path")
    env = {k: v for k, v in document.env.items() if k in m.REQUEST_ENV and isinstance(v, str)}
    return m.Request(
        id=0,
        cwd=document.cwd,
        body=builder(document, key),  # type: ignore[arg-type]
        env=env,
        tenant=env.get("HIPPO_TENANT"),
        session=env.get("HIPPO_SESSION_ID"),
        global_store="--global" in document.argv,
    )


def session_end_document(request: m.Request, body: m.SessionEnd) -> spool.SpoolFile:
    """The spool file that, replayed, makes this session-end request again (the key is its name)."""
    argv = ["session-end"]
    if body.codex_offset is not None:
        argv += ["--codex-offset", str(body.codex_offset)]
    if body.once:
        argv.append("--once")
    if request.global_store:
        argv.append("--global")
    env = {k: v for k, v in request.env.items() if k in m.REQUEST_ENV}
    # A replay takes the tenant and session from the env, where the client's own spool file keeps them.
    for name, value in (("HIPPO_TENANT", request.tenant), ("HIPPO_SESSION_ID", request.session)):
        if value and name not in env:
            env[name] = value
    return spool.SpoolFile(
        v=spool.VERSION,
        kind="session-end",
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        cwd=request.cwd,
        env=env,
        argv=argv,
        stdin=body.payload,
    )
