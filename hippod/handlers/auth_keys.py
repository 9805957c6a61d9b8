"""`auth create|list|revoke`: the HTTP API's keys, in the global store (integrations.md §9.4).

The same handlers serve `hippoctl auth` and the `/v1/auth/keys` routes; the routes decide who may
ask (roles, tenants) before they get here.
"""

from __future__ import annotations

import asyncio

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_http import (
    ApiKeyItem,
    AuthCreatedReply,
    AuthListReply,
    AuthRevokedReply,
    AuthTokenReply,
)
from hippoctl.protocol.validate import API_KEY_PAGE_MAX as MAX_PAGE
from hippoctl.protocol.wording import plural
from hippod.base import clock, keys, local_token
from hippod.base.errors import HippoError
from hippod.base.keys import ROLES
from hippod.base.tenancy import acting_as
from hippod.calls.request import RequestContext
from hippod.store.records import ApiKey
from hippod.store.stores import Store

MAX_LABEL = 200


def item(key: ApiKey) -> ApiKeyItem:
    return ApiKeyItem(
        key_id=key.key_id,
        tenant=key.tenant,
        role=key.role,
        label=key.label,
        created_at=key.created_at,
        revoked_at=key.revoked_at,
    )


def _tenant_problem(tenant: str) -> str | None:
    if not tenant or len(tenant) > 128 or not tenant.isprintable():
        return "the tenant must be 1 to 128 printable characters"
    return None


async def _insert(
    ctx: RequestContext,
    store: Store,
    tenant: str,
    key_id: str,
    key_hash: str,
    label: str | None,
    role: str,
    now: str,
) -> ApiKey:
    async with store.db.transaction() as conn:
        key = await store.keys.insert(conn, key_id, key_hash, tenant, label, role, now)
        await store.rows.audit(
            conn,
            ts=now,
            tenant=tenant,
            actor=ctx.actor,
            op="auth_create",
            target=key_id,
            metadata={"role": role, "label": label},
        )
    return key


async def auth_create(ctx: RequestContext, body: m.AuthCreate) -> tuple[AuthCreatedReply, str]:
    if body.role not in ROLES:
        raise HippoError("usage", f"unknown role {body.role!r}; use admin or member")
    tenant = (body.tenant or "").strip() or ctx.tenant
    problem = _tenant_problem(tenant)
    if problem is not None:
        raise HippoError("usage", problem)
    label = body.label.strip() if body.label and body.label.strip() else None
    if label is not None and len(label) > MAX_LABEL:
        raise HippoError("usage", f"the label is over {MAX_LABEL} characters")
    key_id, plaintext = keys.new_key()
    # About 50 ms of scrypt: off the event loop.
    key_hash = await asyncio.to_thread(keys.hash_key, plaintext)
    store = await ctx.global_store()
    now = clock.iso(clock.now())
    with acting_as(tenant):
        key = await _insert(ctx, store, tenant, key_id, key_hash, label, body.role, now)
    text = "\n".join(
        [
            f"Created {body.role} key {key_id} for tenant {tenant}" + (f" ({label})" if label else ""),
            plaintext,
            "This is the only time the key is shown: hippod keeps only its hash.",
        ]
    )
    return AuthCreatedReply(key=item(key), plaintext=plaintext), text


async def auth_list(ctx: RequestContext, body: m.AuthList) -> tuple[AuthListReply, str]:
    if body.limit is not None and not 1 <= body.limit <= MAX_PAGE:
        raise HippoError("usage", f"the page size must be 1 to {MAX_PAGE}")
    store = await ctx.global_store()
    # One more than asked: whether a next page exists, without a second query.
    wanted = None if body.limit is None else body.limit + 1
    tenant = (body.tenant or "").strip() or ctx.tenant
    with acting_as(tenant):
        found = await store.keys.listed(
            store.db.reader, tenant, active_only=body.active_only, limit=wanted, before=body.after
        )
    more = body.limit is not None and len(found) > body.limit
    page = found[: body.limit] if more else found
    reply = AuthListReply(keys=[item(k) for k in page], next_after=page[-1].row if more else None)
    if not page:
        return reply, f"No API keys for tenant {tenant}."
    lines = [
        f"{k.key_id}  {k.role:<6}  {k.created_at}  "
        + (f"revoked {k.revoked_at}" if k.revoked_at else "active")
        + (f"  {k.label}" if k.label else "")
        for k in page
    ]
    lines.append(f"{plural(len(page), 'key')} for tenant {tenant}")
    return reply, "\n".join(lines)


async def auth_revoke(ctx: RequestContext, body: m.AuthRevoke) -> tuple[AuthRevokedReply, str]:
    store = await ctx.global_store()
    now = clock.iso(clock.now())
    tenant = (body.tenant or "").strip() or ctx.tenant
    with acting_as(tenant):
        key, already = await _revoke(ctx, store, tenant, body.key_id, now)
    when = key.revoked_at
    text = f"{key.key_id} was already revoked at {when}" if already else f"Revoked {key.key_id}"
    return AuthRevokedReply(key=item(key), already=already), text


async def _revoke(
    ctx: RequestContext, store: Store, tenant: str, key_id: str, now: str
) -> tuple[ApiKey, bool]:
    """Revoke the tenant's key (once); the key, and whether it was revoked before."""
    async with store.db.transaction() as conn:
        key = await store.keys.by_key_id(conn, key_id)
        # Another tenant's key is answered as an unknown one: no existence leak.
        if key is None or key.tenant != tenant:
            raise HippoError("not_found", f"no API key {key_id} in tenant {tenant}")
        already = key.revoked_at is not None
        if not already:
            await store.keys.revoke(conn, key.key_id, now)
            key.revoked_at = now
            await store.rows.audit(
                conn, ts=now, tenant=key.tenant, actor=ctx.actor, op="auth_revoke", target=key.key_id
            )
    return key, already


async def auth_token(ctx: RequestContext, body: m.AuthToken) -> tuple[AuthTokenReply, str]:
    """The local token (made if there is none yet): only the daemon's own user reaches its socket. A
    team server has none (the dispatcher refuses the request there: every HTTP request needs a key)."""
    registry = ctx.state.registry
    token = await asyncio.to_thread(local_token.ensure, registry.global_root)
    return AuthTokenReply(token=token, path=local_token.path(registry.global_root)), token
