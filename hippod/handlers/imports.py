"""`import --<format> <path>`, `import --agents` and `export` (ingest.md §1, §2, §4)."""

from __future__ import annotations

from typing import Any

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def import_(ctx: RequestContext, body: m.Import) -> tuple[Any, str]:
    raise HippoError("internal", "import is not built yet")


async def export(ctx: RequestContext, body: m.Export) -> tuple[Any, str]:
    raise HippoError("internal", "export is not built yet")
