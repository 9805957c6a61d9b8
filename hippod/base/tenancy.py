"""The tenant of the request being served, for a store that enforces tenants itself (the team store).

dispatch sets it for each request; tasks the request starts inherit it. The team store's database
runs every transaction as this tenant under row-level security (store/postgres/pg.py), so a handler that
forgot a tenant filter still reads and writes that tenant's rows alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

REQUEST_TENANT: ContextVar[str | None] = ContextVar("hippo_request_tenant", default=None)


@contextmanager
def acting_as(tenant: str) -> Iterator[None]:
    """Serve the rest of a block as `tenant`: for the operator's requests that name the tenant they
    act for (`auth create --tenant`), so a team store writes that tenant's rows."""
    token = REQUEST_TENANT.set(tenant)
    try:
        yield
    finally:
        REQUEST_TENANT.reset(token)


def daemon_tenant(env: Mapping[str, str] | None = None) -> str:
    """The tenant of the user who owns this daemon: HIPPO_TENANT of its environment, else `default`.
    What the daemon does on its own (the daily sleep, imports) acts for this tenant."""
    env = os.environ if env is None else env
    return env.get("HIPPO_TENANT", "").strip() or "default"
