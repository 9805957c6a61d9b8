"""`daemon install-service` and `daemon uninstall-service` (daemon.md §14).

The service is rendered from the daemon's own environment: its interpreter, and HIPPO_HOME and
HIPPO_SOCKET as the client that started it had them (a Hello with another home is refused).
"""

from __future__ import annotations

import os

from hippoctl.protocol import errors
from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_service import ServiceReply
from hippod.calls.request import RequestContext
from hippod.integrations import services

HANDOVER = "   hippod stops now; hippod.socket starts it again on the next connection"


def _answer(ctx: RequestContext, outcome: services.Outcome) -> tuple[ServiceReply, str]:
    """The reply: what was done on stdout; on stderr the warnings and, when something failed, the one
    line that says what and what to do, with exit status 1."""
    ctx.warnings.extend(outcome.report.warnings)
    if outcome.failure is not None:
        ctx.warnings.append(outcome.failure)
        ctx.exit_code = errors.FAILED
    return outcome.reply, "\n".join(outcome.report.lines)


async def install_service(ctx: RequestContext, body: m.ServiceInstall) -> tuple[ServiceReply, str]:
    outcome = await services.install_service(
        global_root=ctx.state.registry.global_root, env=os.environ, socket_activation=body.socket_activation
    )
    reply = outcome.reply
    enabled = bool(reply.commands) and all(c.ok for c in reply.commands)
    if reply.socket_activation and enabled and not ctx.state.socket_activated:
        # hippod.socket is enabled but cannot start while this daemon holds the socket path (and,
        # when it runs as hippod.service, systemd refuses to). So it stops once this reply is out;
        # the next client finds no daemon and starts the recorded socket, which starts hippod.
        outcome.report.lines.append(HANDOVER)
        ctx.state.shutdown.set()
    return _answer(ctx, outcome)


async def uninstall_service(ctx: RequestContext, body: m.ServiceUninstall) -> tuple[ServiceReply, str]:
    outcome = await services.uninstall_service(global_root=ctx.state.registry.global_root, env=os.environ)
    return _answer(ctx, outcome)
