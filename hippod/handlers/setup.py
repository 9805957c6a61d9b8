"""`init` and `setup`: a store, seeded and wired to the agents found (integrations.md §1-§2)."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def setup(ctx: RequestContext, body: m.Setup) -> tuple[object, str]:
    raise HippoError("not_available", "setup is not available yet")
