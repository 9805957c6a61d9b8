"""Request bodies of init, setup, hooks, services, doctor, the HTTP side (serve, dashboard, keys,
webhooks) and MCP (integrations.md); part of messages.RequestBody."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol.body import Body


class Init(Body):
    """`init`: a store here (or the global one), seeded and wired to the agents found (integrations.md §1)."""

    command: str = "hippoctl"  # how installed hooks call this client (hippoctl/selfcommand.py)
    scan: str | None = None  # absolute folder: a store for every git repository below it
    days: int | None = None
    no_hooks: bool = False
    no_schedule: bool = False
    no_learn: bool = False


class Setup(Body):
    """`setup`: the machine-level half of init (integrations.md §2)."""

    command: str = "hippoctl"
    all: bool = False
    dry_run: bool = False
    no_schedule: bool = False


HOOK_TARGETS = ("claude-code", "codex", "cursor", "openclaw", "opencode", "pi")


class HookList(Body):
    """`hook list`: per target, whether it is detected, its files and their state (integrations.md §8)."""

    command: str = "hippoctl"


class HookInstall(Body):
    target: str
    command: str = "hippoctl"


class HookUninstall(Body):
    target: str


class ServiceInstall(Body):
    """`daemon install-service`: the per-user unit, agent or task (daemon.md §14)."""

    socket_activation: bool = False


class ServiceUninstall(Body):
    pass


class Doctor(Body):
    """`doctor`: the daemon's half of the read-only install check (integrations.md §12)."""

    on_team = True

    command: str = "hippoctl"


class SupportBundle(Body):
    """`support-bundle`: the daemon's redacted facts for a support ticket; the client writes the file."""

    on_team = True

    include_logs: bool = False


class Serve(Body):
    """`serve`: open the HTTP listener inside the daemon, or close it (integrations.md §9)."""

    on_team = True

    port: int | None = None  # None: HIPPO_PORT of the daemon, else daemon.json http.port
    host: str | None = None  # None: daemon.json http.host
    allow_remote: bool = False
    stop: bool = False


class DashboardStart(Body):
    """`dashboard`: open the read-only dashboard's loopback listener, or name the one already open
    (integrations.md §13)."""

    port: int | None = None  # None: daemon.json dashboard.port, else 3333; 0: any free port


class DashboardStop(Body):
    """`dashboard --stop`: close the dashboard's listener."""


class AuthCreate(Body):
    """`auth create`: a new API key; its plaintext is in the reply, once."""

    on_team = True

    tenant: str | None = None  # None: the request's tenant
    role: str = "admin"
    label: str | None = None


class AuthList(Body):
    """`auth list`: the keys of the request's tenant, newest first, never their secrets."""

    on_team = True

    active_only: bool = True
    limit: int | None = None
    after: int | None = None  # the paging cursor: keys older than this row number
    tenant: str | None = None  # None: the request's tenant


class AuthRevoke(Body):
    on_team = True

    key_id: str
    tenant: str | None = None  # None: the request's tenant


class AuthToken(Body):
    """`auth token`: the local token, which proves this user to the HTTP API and the dashboard."""


class SlackBackfill(Body):
    """`slack backfill`: page a channel's history into raw memories (integrations.md §10)."""

    channel: str
    since: str | None = None  # ISO time: nothing older
    token: str | None = None  # SLACK_BOT_TOKEN from the client's environment, else the daemon's


class DeadLetters(Body):
    """`slack dlq list` / `github dlq list`: webhook deliveries that could not be ingested."""

    source: str  # slack or github
    limit: int = 100


class DeadLetterReplay(Body):
    """`slack dlq replay` / `github dlq replay`: apply dead letters as the live webhook would, once."""

    source: str  # slack or github
    id: int | None = None  # only this letter
    dry_run: bool = False  # say what each would do; change nothing


class McpToolCall(Body):
    """One MCP tool call from `hippoctl mcp` (integrations.md §11)."""

    on_team = True

    tool: str
    arguments: dict[str, Any] = {}
    session_key: str | None = None  # the last-batch key, `mcp:<pid>`


# Every request body of this family, for messages.RequestBody.
BODIES = (
    Init
    | Setup
    | HookList
    | HookInstall
    | HookUninstall
    | ServiceInstall
    | ServiceUninstall
    | Doctor
    | SupportBundle
    | Serve
    | DashboardStart
    | DashboardStop
    | AuthCreate
    | AuthList
    | AuthRevoke
    | AuthToken
    | SlackBackfill
    | DeadLetters
    | DeadLetterReplay
    | McpToolCall
)
