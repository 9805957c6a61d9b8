"""Typed reply data of `serve`, `dashboard`, `auth`, `slack backfill` and the dead-letter lists
(integrations.md §9, §10, §13). See replies.py for the conventions."""

from __future__ import annotations

from typing import Any

import msgspec

from hippoctl.protocol.replies import Reply


class ServeReply(Reply):
    """The HTTP listener: where it listens, or `running` False once closed (or never opened)."""

    running: bool
    url: str | None = None
    host: str | None = None
    port: int | None = None
    allow_remote: bool = False
    started_at: str | None = None
    store: str | None = None  # the store a request without X-Hippo-Store reaches


class DashboardReply(Reply):
    """The dashboard's listener: the page to open (its URL names the store asked for), or `running`
    False once closed (or never opened)."""

    running: bool
    url: str | None = None
    port: int | None = None
    started_at: str | None = None
    store: str | None = None  # the store the URL shows: a project's .hippo folder, or the global root
    stores: list[str] = msgspec.field(default_factory=list)  # every store the page can switch to


class ApiKeyItem(Reply):
    key_id: str
    tenant: str
    role: str
    label: str | None
    created_at: str
    revoked_at: str | None = None


class AuthCreatedReply(Reply):
    key: ApiKeyItem
    plaintext: str  # shown this once: only its scrypt hash is stored


class AuthListReply(Reply):
    keys: list[ApiKeyItem]
    next_after: int | None = None  # the cursor of the next page, when there is one


class AuthRevokedReply(Reply):
    key: ApiKeyItem
    already: bool = False  # it was revoked before this request


class AuthTokenReply(Reply):
    token: str  # send as Authorization: Bearer <token>, the SDK's api_key
    path: str  # the file that keeps it (mode 0600)


class DeadLetter(Reply):
    id: int
    source: str
    tenant: str
    received_at: str
    bucket: str
    error: str
    retry_count: int


class DeadLettersReply(Reply):
    source: str
    letters: list[DeadLetter] = msgspec.field(default_factory=list)


class ReplayedLetter(Reply):
    """One dead letter's replay: what it became (ingested, duplicate, skipped, archived, not_found,
    deleted, stale, rejected), or `failed` with its new error, or with --dry-run what it would become."""

    id: int
    status: str
    tenant: str
    retry_count: int
    memory_id: str | None = None
    error: str | None = None


class ReplayReply(Reply):
    source: str
    dry_run: bool
    letters: list[ReplayedLetter] = msgspec.field(default_factory=list)
    counts: dict[str, int] = msgspec.field(default_factory=dict)  # status -> how many


class BackfillReply(Reply):
    channel: str
    pages: int
    ingested: int
    duplicates: int
    skipped: int
    latest_ts: str | None = None


class TeamReply(Reply):
    """`team join|leave|status`: the membership and the queue of writes for the team server."""

    joined: bool
    url: str | None = None
    reachable: bool | None = None  # None: not asked (leave), or not joined
    queued: int = 0  # writes waiting to be sent
    failed: int = 0  # writes the server refused (kept, with their error, until `team leave`)
    sent: int = 0  # writes the server acknowledged since the daemon started
    last_error: str | None = None
    dropped: int = 0  # leave: queued writes dropped
    cached: int = 0  # the team's memories in this laptop's copy
    synced_at: str | None = None  # when the copy last caught up with the server
    marks_queued: int = 0  # retrievals and outcome marks of team memories waiting to be sent
    marks_sent: int = 0  # marks the server took since the daemon started


class TeamShareReply(Reply):
    """`share --team`: the memories queued for the team server, each once."""

    queued: list[str]
    already: list[str] = []  # queued or sent before: not queued again


class TeamMarksReply(Reply):
    """How many of a batch's marks found their memory on the team server (the others were gone)."""

    retrieved: int
    good: int
    bad: int
    again: bool = False  # a batch applied before under the same key: nothing done now


class TeamChangesReply(Reply):
    """One page of a team server's changes: whole memory records, deleted ids, and the cursors."""

    memories: list[dict[str, Any]]
    deleted: list[str]
    next: str | None
    horizon: str
