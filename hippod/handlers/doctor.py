"""`doctor` and `support-bundle`: the daemon's half (integrations.md §12).

Both are read-only: they never open a store through the registry (which would migrate it) and never
write a file. The checks read files, so they run in a worker thread.
"""

from __future__ import annotations

import asyncio
import os
import platform
import sys

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import WatchStatus
from hippoctl.protocol.replies_doctor import FAIL, WARN, DoctorReply, SupportBundleReply
from hippoctl.protocol.version import MIN_PROTOCOL, PROTOCOL
from hippoctl.protocol.wording import plural
from hippod import __version__
from hippod.base import clock, daily_time
from hippod.calls.request import RequestContext
from hippod.doctor import bundle
from hippod.doctor.run import Inputs, block_commands, installed_commands, run_checks
from hippod.integrations import services


async def _inputs(ctx: RequestContext, command: str) -> Inputs:
    state = ctx.state
    registry = state.registry
    project = None if ctx.request.global_store else registry.project_root_for(ctx.request.cwd)
    return Inputs(
        global_root=registry.global_root,
        project_root=project,
        command=command,
        env=dict(os.environ),
        now=clock.now(),
        schedule=state.schedule.status() if state.schedule is not None else None,
        daily_log=daily_time.log_path(state.log_file),
        watch=WatchStatus(**await state.watcher.status()) if state.watcher is not None else None,
        pid=state.pid,
        service=await services.state(os.environ),
        load_failures=dict(registry.embedder.unavailable),
        loaded=registry.embedder.loaded(),
    )


async def doctor(ctx: RequestContext, body: m.Doctor) -> tuple[DoctorReply, str]:
    """The checks, and the installed hook commands and the hippo blocks' commands for the client to
    run as their hosts would."""
    inputs = await _inputs(ctx, body.command)
    checks = await asyncio.to_thread(run_checks, inputs)
    commands = await asyncio.to_thread(installed_commands, inputs)
    in_blocks = await asyncio.to_thread(block_commands, inputs)
    failed = sum(c.status == FAIL for c in checks)
    warned = sum(c.status == WARN for c in checks)
    text = f"{plural(len(checks), 'check')}: {failed} failed, {plural(warned, 'warning')}"
    return DoctorReply(checks=checks, commands=commands, blocks=in_blocks), text


async def support_bundle(ctx: RequestContext, body: m.SupportBundle) -> tuple[SupportBundleReply, str]:
    inputs = await _inputs(ctx, "hippoctl")
    config = await asyncio.to_thread(bundle.merged_config, inputs)
    counts = await asyncio.to_thread(bundle.store_counts, inputs)
    state = ctx.state
    reply = SupportBundleReply(
        version=__version__,
        protocol=PROTOCOL,
        min_protocol=MIN_PROTOCOL,
        pid=state.pid,
        started_at=state.started_at,
        python=sys.version.split()[0],
        platform=platform.platform(),
        home=state.registry.global_root,
        socket=state.socket,
        log_dir=os.path.dirname(state.log_file),
        config=config,
        stores=counts,
    )
    return reply, f"support facts of hippod {__version__} (pid {state.pid})"
