"""`learn --git`: lessons from commit subjects, and invalidation on migrations (ingest.md §5)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def learn_git(ctx: RequestContext, body: m.LearnGit) -> tuple[Any, str]:
    raise HippoError("internal", "learn --git is not built yet")
