"""`workspaces` and `daily-runner`: the daily run and its registry (sleep.md §10)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def workspaces(ctx: RequestContext, body: m.Workspaces) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl workspaces is not available yet")


async def daily_runner(ctx: RequestContext, body: m.DailyRunner) -> tuple[Any, str]:
    raise HippoError("not_available", "hippoctl daily-runner is not available yet")
