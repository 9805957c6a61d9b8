"""`hook list|install|uninstall <target>` (integrations.md §3-§8)."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def hook_list(ctx: RequestContext, body: m.HookList) -> tuple[object, str]:
    raise HippoError("not_available", "hook list is not available yet")


async def hook_install(ctx: RequestContext, body: m.HookInstall) -> tuple[object, str]:
    raise HippoError("not_available", "hook install is not available yet")


async def hook_uninstall(ctx: RequestContext, body: m.HookUninstall) -> tuple[object, str]:
    raise HippoError("not_available", "hook uninstall is not available yet")
