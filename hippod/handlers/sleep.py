"""`sleep`: consolidate one store on request (sleep.md §1-§9); the run itself is sleep/run.py."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_lifecycle import SleepReply
from hippod.calls.request import RequestContext
from hippod.sleep import sleep_report
from hippod.sleep.run import SleepOptions, sleep_store


async def sleep(ctx: RequestContext, body: m.Sleep) -> tuple[SleepReply, str]:
    store = await ctx.target_store(write=True)
    options = SleepOptions(
        dry_run=body.dry_run,
        no_learn=body.no_learn,
        no_share=body.no_share,
        progress=body.verbose,
        agent_tools=ctx.request.env.get("HIPPO_AGENT_MEMORY_TOOLS"),
        tenant=None if ctx.owner else ctx.tenant,
        extraction_tenant=ctx.tenant,
    )

    async def to_stderr(line: str) -> None:
        await ctx.say(line, "err")

    reply = sleep_report.for_tenant(await sleep_store(ctx.state, store, options, to_stderr), ctx.tenant)
    return reply, sleep_report.render(reply) if body.verbose else sleep_report.summary(reply)
