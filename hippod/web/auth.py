"""Who is asking: a Bearer API key; or the user who owns the daemon, by the local token or, without a
key, by a request that proves it comes from that user (web/local_caller.py) (integrations.md §9.4,
§9.5). A team server serves keys alone."""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import os
from collections import OrderedDict
from dataclasses import dataclass

from starlette.types import Scope

from hippod.base import keys, local_token
from hippod.base.keys import ROLES
from hippod.store.stores import StoreRegistry
from hippod.web import local_caller
from hippod.web.errors import HttpError

# Verified keys remembered by a digest of the whole token, so a key in use pays scrypt once, not on
# every request; revocation is still read from the table on each one.
_VERIFIED_MAX = 1024
# Where a route that hands its request on (POST /mcp) keeps the checked caller in the ASGI scope.
PRINCIPAL = "hippo.principal"


@dataclass(frozen=True)
class Principal:
    """The caller: its tenant, its role, and its key (None for the local user without a key)."""

    tenant: str
    role: str
    key_id: str | None = None

    @property
    def actor(self) -> str:
        """The audit log's actor."""
        return f"api_key:{self.key_id}" if self.key_id else "localhost:cli"

    @property
    def session(self) -> str:
        """Whose last recalled batch `POST /v1/outcome` marks: one per key."""
        return f"http:{self.key_id}" if self.key_id else "http:localhost"


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def bearer(authorization: str) -> str | None:
    """The credential of an `Authorization: Bearer <credential>` header; None when it is not one."""
    scheme, space, credential = authorization.partition(" ")
    credential = credential.strip()
    return credential if space and scheme.lower() == "bearer" and credential else None


def _unauthorized(message: str) -> HttpError:
    return HttpError(401, "unauthorized", message, {"WWW-Authenticate": "Bearer"})


class Authenticator:
    """Checks each request's credentials: API keys against the global store's `api_keys`, the local
    token against its file, and a request without either against local_caller's rules."""

    def __init__(self, registry: StoreRegistry, *, allow_remote: bool, team: bool) -> None:
        self.registry = registry
        # --allow-remote also turns off the no-key path, even for a request from this machine; a team
        # server has no local user of its own: its operator works through its socket.
        self.keyless = not allow_remote and not team
        self.token_file = local_token.path(registry.global_root)
        self.token = None if team else local_token.LocalToken(registry.global_root)
        if self.token is not None:
            self.token.current()  # made now, so `auth token` and the listener agree from the start
        self._verified: OrderedDict[bytes, str] = OrderedDict()

    def _local_user(self) -> Principal:
        tenant = os.environ.get("HIPPO_TENANT", "").strip() or "default"
        return Principal(tenant=tenant, role="admin")

    async def principal(self, scope: Scope, authorization: list[str]) -> Principal:
        if not authorization:
            if not self.keyless or os.environ.get("HIPPO_REQUIRE_AUTH", "").strip() == "1":
                raise _unauthorized("an API key is required: Authorization: Bearer hk_...")
            refused = local_caller.refusal(scope, self.token_file)
            if refused is not None:
                raise refused
            return self._local_user()
        token = bearer(authorization[0])
        if token is None:
            raise _unauthorized(
                "malformed Authorization header; send: Authorization: Bearer hk_<id>.<secret>"
            )
        if local_token.looks_like(token):
            if self.token is None or not self.token.matches(token):
                raise _unauthorized("invalid local token")
            return self._local_user()
        return await self._key_holder(token)

    async def _key_holder(self, token: str) -> Principal:
        key_id = keys.key_id_of(token)
        store = await self.registry.open(self.registry.global_root)
        row = await store.keys.by_key_id(store.db.reader, key_id) if key_id else None
        digest = hashlib.sha256(token.encode()).digest()
        known = self._verified.get(digest)
        if known is not None and row is not None and known == row.key_id:
            self._verified.move_to_end(digest)
            good = True
        else:
            # An unknown id is checked against a dummy hash: a miss takes as long as a wrong secret.
            stored = row.key_hash if row is not None else keys.dummy_hash()
            good = await asyncio.to_thread(keys.verify, token, stored) and row is not None
            if good and row is not None:
                self._verified[digest] = row.key_id
                if len(self._verified) > _VERIFIED_MAX:
                    self._verified.popitem(last=False)
        if not good or row is None:
            raise _unauthorized("invalid API key")
        if row.revoked_at is not None:
            raise _unauthorized("this API key was revoked")
        return Principal(
            tenant=row.tenant, role=row.role if row.role in ROLES else "member", key_id=row.key_id
        )
