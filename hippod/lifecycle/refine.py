"""`refine`: one memory's text sent to Anthropic's Messages API for a clearer rewrite (one fact,
the same meaning). Nothing is stored here: the client shows the rewrite and, once the user agrees,
supersedes the memory with it through `supersede`."""

from __future__ import annotations

import json
import re

from hippoctl.protocol import validate
from hippoctl.protocol.replies_lifecycle import RefineReply
from hippod.base.errors import HippoError
from hippod.calls.request import RequestContext
from hippod.lifecycle.lookup import find_memory
from hippod.model.secrets import looks_secret
from hippod.remote import anthropic
from hippod.remote.extraction_config import extraction_config
from hippod.remote.http import Caller, Policy
from hippod.remote.providers import ANTHROPIC

EXTRACTION_OFF = "extraction_off"
# What the rewrite may be: one fact stated clearly is short.
MAX_CHARS = 1000
MAX_TOKENS = 1024
SENT_CHARS = 8000

SYSTEM = (
    "You rewrite one memory that a software developer's coding agent saved, so that it states one "
    "fact clearly. Keep its meaning exactly: add nothing, drop no detail that matters, and keep "
    "names, numbers, commands and paths as written. Use one or two plain sentences of at most "
    f"{MAX_CHARS} characters. Answer with JSON only, no prose and no code fence, in exactly this "
    'shape: {"text": "<the rewrite>"}.'
)

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
_SPACES = re.compile(r"[ \t]+")


def read_rewrite(answer: str) -> str | None:
    """The rewrite in a model's answer: the `text` of its JSON object, else the answer itself when
    it holds no JSON; None when that is not a usable memory text."""
    stripped = _FENCE.sub("", answer.strip())
    text: object = stripped
    start = stripped.find("{")
    if start >= 0:
        try:
            value, _ = json.JSONDecoder().raw_decode(stripped, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            text = value.get("text")
    if not isinstance(text, str):
        return None
    text = _SPACES.sub(" ", text).strip().strip('"').strip()
    if len(text) > MAX_CHARS or validate.content_problem(text) is not None:
        return None
    return text


async def propose(ctx: RequestContext, memory_id: str) -> RefineReply:
    """The model's rewrite of a memory. A memory the secret detector flags is never sent, nor one
    that a newer version already replaced, nor any from a store whose config turns extraction off
    (the one switch for what its memories send to a model); without a key, the error names the
    variable to set."""
    store, memory = await find_memory(ctx, memory_id)
    config = extraction_config(store.config)
    if config.turned_off:
        raise HippoError(
            EXTRACTION_OFF,
            f'refine sends nothing from this store: {store.config_file.path} sets "extraction": '
            '{"enabled": false}',
        )
    if memory.superseded_by is not None:
        raise HippoError(
            "already_superseded", f"{memory.id} was already superseded by {memory.superseded_by}"
        )
    if looks_secret(memory.content, memory.tags):
        raise HippoError(
            "secret_memory", f"{memory.id} looks like it holds a secret, and refine never sends one"
        )
    key = ANTHROPIC.require_key(purpose="refine")
    async with Caller(ANTHROPIC, key, Policy(timeout_s=config.timeout_s)) as caller:
        reply = await anthropic.message(
            caller,
            model=config.model,
            system=SYSTEM,
            user=f"<memory>\n{memory.content[:SENT_CHARS]}\n</memory>",
            max_tokens=MAX_TOKENS,
        )
    rewrite = read_rewrite(reply.text)
    if rewrite is None:
        raise HippoError(
            "model_api_error", f"Anthropic API: the answer held no usable rewrite of {memory.id}"
        )
    return RefineReply(
        id=memory.id,
        old=memory.content,
        new=rewrite,
        model=config.model,
        unchanged=rewrite == memory.content.strip(),
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
    )
