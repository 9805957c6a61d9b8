"""capture-error's pure rules (ingest.md §7): reading the host's payload, classifying the failure,
hashing its error, and the memory text kept for it. No I/O here.

A failed tool call's error is kept the way `watch` keeps a failed command's output: its salient
lines, normalised (hippod/ingest/failure_output.py), so a failing `npm test` is remembered by its error,
not by npm's log.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from typing import Any

from hippod.ingest import failure_output
from hippod.model.secrets import scrub

OUTCOMES = ("stored", "duplicate", "interrupt", "permission_declined", "empty_search", "rejected")
SEARCH_TOOLS = frozenset({"Grep", "Glob", "LS", "WebSearch", "ToolSearch"})
COMMAND_CHARS = 120

_INTERRUPT = re.compile(r"interrupted|user (cancel|abort)", re.IGNORECASE)
_DECLINED = re.compile(
    r"(permission|user) (denied|declined|rejected)|doesn't want to proceed|rejected by the user",
    re.IGNORECASE,
)
_EMPTY = re.compile(r"no (matches|files|results) found|found 0", re.IGNORECASE)

# Shape normalisation, in ingest.md §7's order on the lowercased text: each number becomes 0 (a run
# of digits is one number, so "line 7" and "line 12" match), then hex runs of 8 or more (commit ids,
# addresses, as they read after the numbers are zeroed), then absolute paths, then spacing.
_PATH = re.compile(r"(?<![\w/.~-])(?:~|[a-z]:)?[/\\][^\s\"'`()\[\]{}<>,;:]+")
_HEX = re.compile(r"\b[0-9a-f]{8,}\b")
_DIGIT = re.compile(r"[0-9]+")
_SPACE = re.compile(r"\s+")


class MalformedPayload(ValueError):
    """The host's input is not a PostToolUseFailure payload; the message names what is wrong."""


@dataclass(frozen=True, slots=True)
class ToolFailure:
    """The fields of a PostToolUseFailure payload that capture-error reads."""

    tool: str
    error: str
    session_id: str | None = None
    is_interrupt: bool = False
    command: str | None = None
    cwd: str | None = None  # the folder the tool ran in, when the payload names an absolute one


def parse_payload(payload: Any) -> ToolFailure:
    """Read the host's JSON; raises MalformedPayload naming the first missing or wrong field."""
    if payload is None:
        raise MalformedPayload("no input: capture-error reads the host's JSON on stdin")
    if not isinstance(payload, dict):
        raise MalformedPayload("the input is not a JSON object")
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not tool.strip():
        raise MalformedPayload("the input has no tool_name")
    error = payload.get("error")
    if not isinstance(error, str) or not error.strip():
        raise MalformedPayload("the input has no error text")
    session = payload.get("session_id")
    cwd = payload.get("cwd")
    command = None
    tool_input = payload.get("tool_input")
    if isinstance(tool_input, dict) and isinstance(tool_input.get("command"), str):
        command = tool_input["command"]
    return ToolFailure(
        tool=tool.strip(),
        error=error,
        session_id=session.strip() or None if isinstance(session, str) else None,
        is_interrupt=payload.get("is_interrupt") is True,
        command=command,
        cwd=cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None,
    )


def classify(failure: ToolFailure) -> str | None:
    """The outcome decided by the payload alone (interrupt, permission_declined, empty_search), else None.

    The store decides the rest: rejected, duplicate or stored.
    """
    if failure.is_interrupt or _INTERRUPT.search(failure.error):
        return "interrupt"
    if _DECLINED.search(failure.error):
        return "permission_declined"
    if failure.tool in SEARCH_TOOLS and _EMPTY.search(failure.error):
        return "empty_search"
    return None


def exact_hash(error: str) -> str:
    """sha256 of the raw error text."""
    return hashlib.sha256(error.encode("utf-8", errors="surrogatepass")).hexdigest()


def shape(error: str) -> str:
    """The error with what varies between repeats (paths, ids, numbers, spacing) replaced."""
    text = error.lower()
    text = _DIGIT.sub("0", text)
    text = _HEX.sub("<hex>", text)
    text = _PATH.sub("<path>", text)
    return _SPACE.sub(" ", text).strip()


def shape_hash(error: str) -> str:
    """sha256 of the error's shape: the same failure with other paths, ids or numbers hashes alike."""
    return hashlib.sha256(shape(error).encode("utf-8", errors="surrogatepass")).hexdigest()


def _collapse(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def memory_text(failure: ToolFailure, *, cwd: str | None, home: str | None) -> str:
    """`<tool> failed: <the error's salient lines>` plus ` (command: <120 chars>)`, secrets scrubbed.

    `cwd` and `home` are the folders that paths are written relative to (failure_output.normalise).
    Scrubbing happens before lines are cut, so a secret is never kept half-redacted, and once more after.
    """
    error = failure_output.summary(failure.error, "", cwd=cwd, home=home)
    text = f"{failure.tool} failed: {error}"
    if failure.command is not None and failure.command.strip():
        text += f" (command: {scrub(_collapse(failure.command))[:COMMAND_CHARS]})"
    return scrub(text)


def tags(failure: ToolFailure) -> list[str]:
    """`error`, `auto-captured`, `tool:<lowercased tool>`."""
    return ["error", "auto-captured", f"tool:{failure.tool.lower()}"]
