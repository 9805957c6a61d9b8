"""`dormant [query]`, `dormant restore` and `dormant forget` (memory-model.md §13)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def dormant(ctx: RequestContext, body: m.Dormant) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl dormant is not available yet")


async def restore(ctx: RequestContext, body: m.DormantRestore) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl dormant restore is not available yet")


async def forget(ctx: RequestContext, body: m.DormantForget) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl dormant forget is not available yet")
