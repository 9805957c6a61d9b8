"""`recall`: ranked memories within a token budget (recall.md §1-§9, §12); the ranking is
recall/search.py, the fill recall/answer.py, the strengthening after it recall/strengthen.py."""

from __future__ import annotations

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies import RecallReply
from hippod.calls.request import RequestContext
from hippod.recall import answer


async def recall(ctx: RequestContext, body: m.Recall) -> tuple[RecallReply, str]:
    return await answer.recall(ctx, body, rerank_default=True)
