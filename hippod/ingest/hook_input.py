"""What the compaction and session hooks share: reading the host's JSON and choosing the store."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.store.roots import DB_NAME
from hippod.store.stores import SqliteStore, sqlite_only


@dataclass(frozen=True, slots=True)
class HookInput:
    """The fields of a Claude Code hook payload the hooks use; absent ones are None."""

    session_id: str | None = None
    transcript_path: str | None = None
    cwd: str | None = None
    trigger: str | None = None
    source: str | None = None
    summary: str | None = None


def _text(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value.strip() or None if isinstance(value, str) else None


def read_payload(verb: str, payload: Any) -> HookInput:
    """The host's JSON as a HookInput (no input at all gives an empty one); a payload that is not a
    JSON object is refused with a usage error naming the verb."""
    if payload is None:
        return HookInput()
    if not isinstance(payload, dict):
        raise HippoError("usage", f"{verb}: the input is not a JSON object")
    summary = payload.get("compact_summary")
    if not isinstance(summary, str) or not summary.strip():
        summary = payload.get("summary")
    return HookInput(
        session_id=_text(payload, "session_id"),
        transcript_path=_text(payload, "transcript_path"),
        cwd=_text(payload, "cwd"),
        trigger=_text(payload, "trigger"),
        source=_text(payload, "source"),
        summary=summary.strip() if isinstance(summary, str) and summary.strip() else None,
    )


def session_of(ctx: RequestContext, given: HookInput) -> str | None:
    """The host's session id, else HIPPO_SESSION_ID or --session of the request."""
    if given.session_id:
        return given.session_id
    session = ctx.request.session or ctx.request.env.get("HIPPO_SESSION_ID", "").strip()
    return session or None


async def existing_target(ctx: RequestContext) -> SqliteStore | None:
    """The project store above cwd, else the global store only if it already exists (never created);
    the hooks that keep their rows in it need a laptop's own store (HippoError `not_on_team_store`)."""
    if not ctx.request.global_store:
        project = await ctx.project_store()
        if project is not None:
            return sqlite_only(project, ctx.verb)
    if not os.path.exists(os.path.join(ctx.state.registry.global_root, DB_NAME)):
        return None
    return sqlite_only(await ctx.global_store(), ctx.verb)


def transcript_file(ctx: RequestContext, given: HookInput) -> str | None:
    """The payload's transcript path made absolute against the request's folder, when it names a file."""
    if not given.transcript_path:
        return None
    path = os.path.join(ctx.request.cwd, os.path.expanduser(given.transcript_path))
    return path if os.path.isfile(path) else None
