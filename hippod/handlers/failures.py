"""Failures as memories: `watch` (ingest.md §6), `capture-error` (§7) and the `failures` log
(continuity.md §8)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def watch_failure(ctx: RequestContext, body: m.WatchFailure) -> tuple[Any, str]:
    raise HippoError("internal", "watch is not built yet")


async def capture_error(ctx: RequestContext, body: m.CaptureError) -> tuple[Any, str]:
    raise HippoError("internal", "capture-error is not built yet")


async def failures(ctx: RequestContext, body: m.Failures) -> tuple[Any, str]:
    raise HippoError("internal", "failures is not built yet")
