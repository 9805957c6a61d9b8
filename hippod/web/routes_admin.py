"""`/health`, the API keys and the audit log (integrations.md §9.4, §9.5)."""

from __future__ import annotations

from starlette.responses import Response

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import ApiKeyItem, AuthCreatedReply, AuthListReply, AuthRevokedReply
from hippoctl.protocol.replies_lifecycle import AuditReply
from hippoctl.protocol.validate import API_KEY_PAGE_MAX as MAX_PAGE
from hippoctl.protocol.validate import AUDIT_PAGE_MAX as MAX_AUDIT
from hippod import __version__
from hippod.base.keys import ROLES
from hippod.web import wire
from hippod.web.errors import HttpError
from hippod.web.routing import Call, Op, Param, json_response


async def health(call: Call) -> Response:
    state = call.state
    return json_response(
        wire.Health(ok=True, version=__version__, started_at=state.started_at, pid=state.pid)
    )


def _key(item: ApiKeyItem) -> wire.AuthKey:
    return wire.AuthKey(
        key_id=item.key_id,
        tenant_id=item.tenant,
        role=item.role,
        label=item.label,
        created_at=item.created_at,
        revoked_at=item.revoked_at,
    )


async def auth_create(call: Call) -> Response:
    given = await call.body(wire.AuthCreateIn)
    role = given.role or "admin"
    if role not in ROLES:
        raise HttpError(400, "bad_request", "role must be admin or member")
    tenant = given.tenant or call.principal.tenant
    if tenant != call.principal.tenant:
        # Keys of another tenant are the operator's to make, through the daemon's socket, which only
        # the user who owns the daemon can reach.
        raise HttpError(
            403,
            "forbidden",
            f"over HTTP a caller creates keys for its own tenant ({call.principal.tenant}) only; "
            f"keys for {tenant} are made on this machine: hippoctl auth create --tenant {tenant}",
        )
    reply: AuthCreatedReply = await call.run(m.AuthCreate(tenant=tenant, role=role, label=given.label))
    key = reply.key
    created = wire.AuthCreated(
        key_id=key.key_id,
        plaintext=reply.plaintext,
        tenant_id=key.tenant,
        role=key.role,
        label=key.label,
        created_at=key.created_at,
    )
    return json_response(created, 201)


async def auth_list(call: Call) -> Response:
    active = call.query_str("active", 8)
    if active not in (None, "true", "false"):
        raise HttpError(400, "bad_request", "active must be true or false")
    cursor = call.query_str("cursor", 20)
    if cursor is not None and not cursor.isdigit():
        raise HttpError(400, "bad_request", "cursor must be the X-Next-Cursor of a previous page")
    body = m.AuthList(
        active_only=active != "false",
        limit=call.query_int("limit", 1, MAX_PAGE),
        after=int(cursor) if cursor is not None else None,
    )
    reply: AuthListReply = await call.run(body)
    headers = {"X-Next-Cursor": str(reply.next_after)} if reply.next_after is not None else None
    return json_response([_key(k) for k in reply.keys], headers=headers)


async def auth_revoke(call: Call) -> Response:
    reply: AuthRevokedReply = await call.run(m.AuthRevoke(key_id=call.path_id("key_id")))
    key = reply.key
    return json_response(wire.AuthRevoked(ok=True, key_id=key.key_id, revoked_at=key.revoked_at or ""))


async def audit(call: Call) -> Response:
    body = m.AuditList(
        op=call.query_text("op", 64),
        since=call.query_text("since", 64),
        limit=call.query_int("limit", 1, MAX_AUDIT) or 100,
    )
    reply: AuditReply = await call.run(body)
    events = [
        wire.AuditEvent(
            id=e.id,
            tenant_id=e.tenant,
            actor=e.actor,
            op=e.op,
            target_id=e.target,
            metadata=e.metadata,
            created_at=e.ts,
            ts=e.ts,
        )
        for e in reply.entries
    ]
    return json_response(events)


OPS = (
    Op(
        "GET",
        "/health",
        health,
        "Liveness: the daemon's version, pid and start time",
        role=None,
        ok=(200, wire.Health),
    ),
    Op(
        "POST",
        "/v1/auth/keys",
        auth_create,
        "Create an API key; its plaintext is in this reply only",
        role="admin",
        body=wire.AuthCreateIn,
        ok=(201, wire.AuthCreated),
    ),
    Op(
        "GET",
        "/v1/auth/keys",
        auth_list,
        "The keys of the caller's tenant, newest first; X-Next-Cursor names the next page",
        role="admin",
        query=(
            Param("active", {"type": "string", "enum": ["true", "false"]}, description="default true"),
            Param("limit", {"type": "integer", "minimum": 1, "maximum": MAX_PAGE}),
            Param("cursor", {"type": "string", "pattern": "^[0-9]{1,20}$"}),
        ),
        ok=(200, list[wire.AuthKey]),
    ),
    Op(
        "DELETE",
        "/v1/auth/keys/{key_id}",
        auth_revoke,
        "Revoke a key of the caller's tenant",
        role="admin",
        ok=(200, wire.AuthRevoked),
    ),
    Op(
        "GET",
        "/v1/audit",
        audit,
        "The audit log of the caller's tenant, newest first (never memory text)",
        role="admin",
        query=(
            Param("op", {"type": "string", "maxLength": 64}),
            Param("since", {"type": "string", "maxLength": 64}, description="an ISO date or time"),
            Param(
                "limit", {"type": "integer", "minimum": 1, "maximum": MAX_AUDIT}, description="default 100"
            ),
        ),
        ok=(200, list[wire.AuditEvent]),
    ),
)
