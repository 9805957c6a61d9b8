"""`doctor` and `support-bundle`: the daemon's half (integrations.md §12)."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def doctor(ctx: RequestContext, body: m.Doctor) -> tuple[object, str]:
    raise HippoError("not_available", "doctor is not available yet")


async def support_bundle(ctx: RequestContext, body: m.SupportBundle) -> tuple[object, str]:
    raise HippoError("not_available", "support bundle is not available yet")
