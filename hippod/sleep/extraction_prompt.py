"""What sleep's fact extraction asks the model, and how its answer is read (sleep.md §4): a strict
JSON shape asked for, and an answer read defensively, since a model may wrap its JSON in prose or a
code fence, give more facts than asked, or none."""

from __future__ import annotations

import json
import re
from typing import Any

from hippod.model.secrets import looks_secret

MAX_FACTS = 5
MIN_CHARS = 10
MAX_CHARS = 300
# A memory's text is cut to this before it is sent: a fact worth keeping is in its opening, and the
# cut bounds what one call costs.
SENT_CHARS = 4000
# The answer's length: five facts of 300 characters and their JSON fit well within it.
MAX_TOKENS = 1024

SYSTEM = (
    "You extract durable facts from one note that a software developer's coding agent saved to its "
    "memory. Answer with JSON only, no prose and no code fence, in exactly this shape: "
    '{"facts": ["<fact>", ...]}. '
    f"Give at most {MAX_FACTS} facts. Each fact is one self-contained sentence of {MIN_CHARS} to "
    f"{MAX_CHARS} characters that the note itself states (never a guess), still useful weeks later: a "
    "decision and its reason, a convention, a cause of a failure, a preference, a command that works. "
    "Name things as the note does. Never include credentials, keys, tokens or passwords. If the note "
    'holds no such fact, answer {"facts": []}.'
)

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
_SPACES = re.compile(r"\s+")


def user_turn(text: str) -> str:
    """The one user turn of a call: the memory's text between markers."""
    return f"<note>\n{text[:SENT_CHARS]}\n</note>"


def _first_json(text: str) -> Any:
    """The first JSON object or array in `text`, or None."""
    stripped = _FENCE.sub("", text.strip())
    decoder = json.JSONDecoder()
    for start, char in enumerate(stripped):
        if char in "{[":
            try:
                value, _ = decoder.raw_decode(stripped, start)
            except ValueError:
                continue
            return value
    return None


def _as_text(item: Any) -> str | None:
    if isinstance(item, dict):
        item = item.get("fact", item.get("text"))
    return _SPACES.sub(" ", item).strip() if isinstance(item, str) else None


def parse_facts(answer: str) -> list[str] | None:
    """The facts in a model's answer: at most 5, each 10-300 characters, none a repeat or looking
    like a secret. None when the answer holds no JSON of the asked shape (an unreadable answer, as
    against an answer of no facts)."""
    value = _first_json(answer)
    if isinstance(value, dict):
        value = value.get("facts")
    if not isinstance(value, list):
        return None
    facts: list[str] = []
    seen: set[str] = set()
    for item in value:
        text = _as_text(item)
        if text is None or not MIN_CHARS <= len(text) <= MAX_CHARS or looks_secret(text):
            continue
        if text.lower() in seen:
            continue
        seen.add(text.lower())
        facts.append(text)
        if len(facts) == MAX_FACTS:
            break
    return facts
