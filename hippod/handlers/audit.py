"""`audit list` and `audit prune` (memory-model.md §15)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def audit_list(ctx: RequestContext, body: m.AuditList) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl audit list is not available yet")


async def audit_prune(ctx: RequestContext, body: m.AuditPrune) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl audit prune is not available yet")
