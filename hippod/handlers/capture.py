"""`capture --stdin|--file|--last-session`: heuristic extraction from conversation text (ingest.md §3)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def capture(ctx: RequestContext, body: m.Capture) -> tuple[Any, str]:
    raise HippoError("internal", "capture is not built yet")
