"""`decide`, `decide list|get|close` (memory-model.md §12)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def decide(ctx: RequestContext, body: m.Decide) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl decide is not available yet")


async def decide_list(ctx: RequestContext, body: m.DecideList) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl decide list is not available yet")


async def decide_get(ctx: RequestContext, body: m.DecideGet) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl decide get is not available yet")


async def decide_close(ctx: RequestContext, body: m.DecideClose) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl decide close is not available yet")
