"""Reading a compaction (ingest.md §8): the summary's `Memories for hippo` section, the newest
compaction summary a Claude Code transcript holds, and the conversation in a transcript's tail.
Pure functions over text and bytes."""

from __future__ import annotations

import os
import re

from hippod.ingest import transcript

SECTION_PHRASE = "memories for hippo"
# A heading (`#`), a bold line, or a line that is just the phrase (with a colon) opens the section.
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_BOLD = re.compile(r"^\s*(\*\*|__)(?P<inner>.+?)(\*\*|__)\s*:?\s*$")
_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+(?P<text>.*\S)\s*$")
# The tail sizes pre-compact tries in turn until the tail holds a usable message.
TAIL_SIZES = (256 * 1024, 1024 * 1024, 4 * 1024 * 1024)


def _opens_section(line: str) -> bool:
    low = line.strip().lower()
    if SECTION_PHRASE not in low:
        return False
    if _HEADING.match(line) or _BOLD.match(line):
        return True
    return low.rstrip(":").strip() == SECTION_PHRASE


def _closes_section(line: str) -> bool:
    return bool(_HEADING.match(line) or _BOLD.match(line))


def memory_items(summary: str) -> list[str]:
    """The items listed under the summary's last `Memories for hippo` section, in order.

    Items are `-`, `*`, `•` or `1.` lines; an indented line continues the item above it. The
    section ends at the next heading or bold line, or at a blank line followed by non-list text.
    """
    lines = summary.splitlines()
    starts = [i for i, line in enumerate(lines) if _opens_section(line)]
    if not starts:
        return []
    items: list[str] = []
    blank = False
    for line in lines[starts[-1] + 1 :]:
        if not line.strip():
            blank = True
            continue
        if _closes_section(line):
            break
        found = _ITEM.match(line)
        if found:
            items.append(found.group("text").strip())
        elif items and not blank and line[:1].isspace():
            items[-1] = f"{items[-1]} {line.strip()}"
        elif items or blank:
            break
        blank = False
    return [item for item in items if item]


def _content_text(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "\n".join(texts) if texts else None
    return None


def newest_compact_summary(data: bytes) -> str | None:
    """The text of the newest compaction-summary entry (`isCompactSummary`) in a Claude Code transcript."""
    found: str | None = None
    for record in transcript.records(data):
        if not record.get("isCompactSummary"):
            continue
        message = record.get("message")
        text = _content_text(message.get("content")) if isinstance(message, dict) else None
        if text and text.strip():
            found = text.strip()
    return found


def read_tail(path: str, size: int) -> bytes:
    """The last `size` bytes of a file (all of it when smaller); the first, torn line is dropped."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        length = handle.tell()
        start = max(0, length - size)
        handle.seek(start)
        data = handle.read()
    if start > 0:
        cut = data.find(b"\n")
        data = data[cut + 1 :] if cut >= 0 else b""
    return data


def tail_conversation(path: str) -> transcript.Conversation:
    """The conversation in the transcript's tail: 256 KiB, else 1 MiB, else 4 MiB, until one holds a
    message."""
    conversation = transcript.Conversation()
    for size in TAIL_SIZES:
        conversation = transcript.parse(read_tail(path, size))
        if conversation.user or conversation.assistant:
            break
    return conversation
