"""`promote`, `share`, `peers` and `sync`: the global store (sleep.md §8)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def promote(ctx: RequestContext, body: m.Promote) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl promote is not available yet")


async def share(ctx: RequestContext, body: m.Share) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl share is not available yet")


async def peers(ctx: RequestContext, body: m.Peers) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl peers is not available yet")


async def sync(ctx: RequestContext, body: m.Sync) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl sync is not available yet")
