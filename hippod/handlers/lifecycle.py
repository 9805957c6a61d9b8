"""`supersede`, `reject`, `rejections`, `unreject` and `invalidate` (memory-model.md §12)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def supersede(ctx: RequestContext, body: m.Supersede) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl supersede is not available yet")


async def reject(ctx: RequestContext, body: m.Reject) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl reject is not available yet")


async def rejections(ctx: RequestContext, body: m.Rejections) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl rejections is not available yet")


async def unreject(ctx: RequestContext, body: m.Unreject) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl unreject is not available yet")


async def invalidate(ctx: RequestContext, body: m.Invalidate) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl invalidate is not available yet")
