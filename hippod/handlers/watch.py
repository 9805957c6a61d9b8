"""`watch "<command>"`, daemon side: store a failed command as an error memory (ingest.md §6).

The memory holds the output's salient error lines (hippod/ingest/failure_output.py), not the log: it is
shown in every block that lists recent memories. Like every new memory it is never pinned.
"""

from __future__ import annotations

import os
import re
import shlex

from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_capture import WatchReply
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.ingest import failure_output
from hippod.lifecycle.new_memory import fresh_memory
from hippod.model.secrets import scrub
from hippod.store.sqlite import memories
from hippod.store.sqlite.overlap import find_overlapping
from hippod.store.stores import sqlite_only

KNOWN_ABOVE = 0.7
# Leading `VAR=value` words set the command's environment; they are not the command.
_ASSIGNMENTS = re.compile(r"""^\s*(?:[A-Za-z_]\w*=(?:"[^"]*"|'[^']*'|\\.|[^\s"'\\])*\s+)+""")


def bare_command(command: str) -> str:
    """The command without its leading VAR=value words."""
    return _ASSIGNMENTS.sub("", command, count=1).strip()


def first_word(command: str) -> str:
    """The basename of the program the command runs ("" when there is none)."""
    try:
        words = shlex.split(command)
    except ValueError:  # an unbalanced quote: the shell refused it too
        words = command.split()
    return os.path.basename(words[0]) if words else ""


def failure_text(command: str, exit_code: int, lines: str, *, printed: bool = False) -> str:
    """`Command '<command>' failed (exit N): <salient lines>`, secrets scrubbed; `printed` says
    whether the command printed anything when no line was salient."""
    said = lines or ("(no error lines in its output)" if printed else "(no output)")
    return scrub(f"Command '{command}' failed (exit {exit_code}): {said}")


async def watch_failure(ctx: RequestContext, body: m.WatchFailure) -> tuple[WatchReply, str]:
    command = bare_command(body.command)
    if not command:
        raise HippoError("usage", "watch needs a command")
    lines = failure_output.summary(
        body.output, body.stdout, cwd=ctx.request.cwd, home=os.path.expanduser("~")
    )
    printed = bool(body.output.strip() or body.stdout.strip())
    content = failure_text(command, body.exit_code, lines, printed=printed)
    tags = list(dict.fromkeys(t for t in ("error", "autolearn", first_word(command)) if t))
    store = sqlite_only(await ctx.target_store(write=True), ctx.verb)
    async with store.db.transaction() as conn:
        known = await find_overlapping(conn, ctx.tenant, content, KNOWN_ABOVE, fts5=store.fts5)
        if known is not None:
            return WatchReply(
                stored=False, id=known.id, content=known.content
            ), f"this failure is already known [{known.id}]; not stored again"
        memory = fresh_memory(ctx, store, content, tags, source="autolearn", confidence="observed")
        if not await memories.insert(conn, memory):
            raise HippoError("rejected_value", "this failure's text was rejected earlier and is not stored")
        await memories.audit(
            conn, ts=memory.created, tenant=ctx.tenant, actor=ctx.actor, op="watch", target=memory.id
        )
    store.written([memory])
    return WatchReply(stored=True, id=memory.id, content=content), f"remembered this failure [{memory.id}]"
