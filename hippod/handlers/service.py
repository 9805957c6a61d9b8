"""`daemon install-service` and `daemon uninstall-service` (daemon.md §14)."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippod.errors import HippoError
from hippod.request import RequestContext


async def install_service(ctx: RequestContext, body: m.ServiceInstall) -> tuple[object, str]:
    raise HippoError("not_available", "install service is not available yet")


async def uninstall_service(ctx: RequestContext, body: m.ServiceUninstall) -> tuple[object, str]:
    raise HippoError("not_available", "uninstall service is not available yet")
