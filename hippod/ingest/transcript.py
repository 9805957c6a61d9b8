"""Summarising a session transcript for `capture --last-session` (ingest.md §3).

Claude Code transcripts are JSONL: `user` records whose message content is a plain string are what
the user typed (a list there holds tool results), and `assistant` records hold `text` blocks among
thinking and tool_use blocks. Codex rollout files are JSONL too: `response_item` records of type
`message` with `input_text` (user) or `output_text` (assistant) parts.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

USER_MESSAGES = 20
USER_CHARS = 500
ASSISTANT_MESSAGES = 10
ASSISTANT_CHARS = 2000

# Text a host injects into the user's turn (slash-command echoes, hook and system reminders,
# Codex's environment and instruction blocks) is not something the user said.
_INJECTED_PREFIXES = (
    "<",
    "Caveat: The messages below were generated",
    "# AGENTS.md instructions for",
    "[Request interrupted by user",
)
_decode = msgspec.json.Decoder().decode


@dataclass
class Conversation:
    """The user's and the assistant's messages, oldest first."""

    user: list[str] = field(default_factory=list)
    assistant: list[str] = field(default_factory=list)
    session_id: str | None = None  # the host's session id, when the transcript names it


def claude_home(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """$CLAUDE_CONFIG_DIR, else ~/.claude (as the daemon sees it)."""
    env = os.environ if env is None else env
    configured = env.get("CLAUDE_CONFIG_DIR", "").strip()
    return os.path.expanduser(configured) if configured else os.path.expanduser("~/.claude")


def newest_transcript(home: str) -> str | None:
    """The most recently modified `*.jsonl` under `<home>/projects/*/`, if there is one."""
    newest: tuple[float, str] | None = None
    for path in glob.glob(os.path.join(glob.escape(home), "projects", "*", "*.jsonl")):
        try:
            moment = os.stat(path).st_mtime
        except OSError:
            continue
        if newest is None or (moment, path) > newest:
            newest = (moment, path)
    return None if newest is None else newest[1]


def _said(text: object) -> str | None:
    if not isinstance(text, str):
        return None
    text = text.strip()
    if not text or text.startswith(_INJECTED_PREFIXES):
        return None
    return text


def _parts(content: object, kind: str) -> list[str]:
    """The `text` of each block of this type in a content list."""
    if not isinstance(content, list):
        return []
    return [b["text"] for b in content if isinstance(b, dict) and b.get("type") == kind and "text" in b]


def _claude(record: dict[str, Any], into: Conversation) -> None:
    if isinstance(record.get("sessionId"), str):
        into.session_id = record["sessionId"]
    message = record.get("message")
    if not isinstance(message, dict) or record.get("isMeta") or record.get("isCompactSummary"):
        return
    if record.get("type") == "user":
        said = _said(message.get("content"))
        if said is not None:
            into.user.append(said)
    elif record.get("type") == "assistant":
        texts = [t for t in (_said(p) for p in _parts(message.get("content"), "text")) if t]
        if texts:
            into.assistant.append("\n".join(texts))


def _codex(item: dict[str, Any], into: Conversation) -> None:
    if item.get("type") != "message":
        return
    if item.get("role") == "user":
        texts = [t for t in (_said(p) for p in _parts(item.get("content"), "input_text")) if t]
        if texts:
            into.user.append("\n".join(texts))
    elif item.get("role") == "assistant":
        texts = [t for t in (_said(p) for p in _parts(item.get("content"), "output_text")) if t]
        if texts:
            into.assistant.append("\n".join(texts))


def records(data: bytes) -> Iterator[dict[str, Any]]:
    """Each JSON object line of a JSONL file; other lines (a torn last line, say) are skipped."""
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            record = _decode(line)
        except (msgspec.DecodeError, RecursionError):
            continue
        if isinstance(record, dict):
            yield record


def parse(data: bytes) -> Conversation:
    """The conversation in a Claude Code or Codex JSONL transcript."""
    conversation = Conversation()
    for record in records(data):
        payload = record.get("payload")
        if record.get("type") == "response_item" and isinstance(payload, dict):
            _codex(payload, conversation)
        elif record.get("type") == "session_meta" and isinstance(payload, dict):
            if isinstance(payload.get("id"), str):
                conversation.session_id = payload["id"]
        elif record.get("type") == "message" and "role" in record:
            _codex(record, conversation)  # older Codex rollouts hold bare items
        else:
            _claude(record, conversation)
    return conversation


def summary(conversation: Conversation) -> str:
    """The text the extractor runs over: the last 20 user and 10 assistant messages, cut."""
    lines = ["# Session Summary", "## User Messages"]
    lines += [f"- {text[:USER_CHARS]}" for text in conversation.user[-USER_MESSAGES:]]
    lines.append("## Assistant Responses")
    lines += [f"- {text[:ASSISTANT_CHARS]}" for text in conversation.assistant[-ASSISTANT_MESSAGES:]]
    return "\n".join(lines) + "\n"
