"""`refine <id>`: the model's rewrite of one memory, for the client to show and, if the user agrees,
supersede with (hippoctl/refine.py)."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_lifecycle import RefineReply
from hippod.calls.request import RequestContext
from hippod.lifecycle.refine import propose


async def refine(ctx: RequestContext, body: m.Refine) -> tuple[RefineReply, str]:
    reply = await propose(ctx, body.id)
    return reply, f"{reply.id} now:\n  {reply.old}\nRewritten:\n  {reply.new}"
