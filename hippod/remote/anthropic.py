"""Anthropic's Messages API (`POST /v1/messages`): one user turn in, the text of the answer and
the tokens it used out."""

from __future__ import annotations

from dataclasses import dataclass

from hippod.base.errors import HippoError
from hippod.remote.http import API_ERROR, Caller


@dataclass(frozen=True)
class Reply:
    """The model's text and the tokens the call used (input, output)."""

    text: str
    input_tokens: int
    output_tokens: int

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


async def message(caller: Caller, *, model: str, system: str, user: str, max_tokens: int) -> Reply:
    """Ask `model` one question; its text blocks joined, and the usage it reports."""
    body = await caller.post(
        "/v1/messages",
        {
            "model": model,
            "max_tokens": max_tokens,
            "system": system,
            "messages": [{"role": "user", "content": user}],
        },
    )
    content = body.get("content")
    if not isinstance(content, list):
        raise HippoError(API_ERROR, "Anthropic API: the answer has no content")
    text = "".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    assert isinstance(usage, dict)
    return Reply(text, _count(usage.get("input_tokens")), _count(usage.get("output_tokens")))


def _count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
