"""`conflicts` and `resolve` (sleep.md §7, memory-model.md §12)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def conflicts(ctx: RequestContext, body: m.Conflicts) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl conflicts is not available yet")


async def resolve(ctx: RequestContext, body: m.Resolve) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl resolve is not available yet")
