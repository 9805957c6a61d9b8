"""Reading an import's file (ingest.md §1, §2): its bytes and their digest, then what the format
makes of them, refusing a file that is not what the flag says.

A refusal is one FormatError (or HippoError from files.py) naming the problem: JSON that does not
parse under a format that needs it, a binary file where text is needed, markdown handed to
`--chatgpt`, a ChatGPT export handed to `--claude`, and text that yields nothing to import (an
empty file, one whose pieces are all under 10 characters, a CLAUDE.md holding only hippo's own
block). A structured export that holds no records is no error: it is an empty export.

Blocking and CPU-bound: the handler runs these in worker threads.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field

from hippoctl.protocol.wording import plural
from hippod.calls.progress import Steps
from hippod.ingest import chatgpt, chunking, export_doc, files, sources
from hippod.ingest.chatgpt import FormatMismatch
from hippod.ingest.chunking import Chunk, FormatError
from hippod.ingest.export_doc import ParsedExport

# C0 controls other than tab, line feed, vertical tab, form feed, carriage return and escape:
# text files do not hold these, binary ones do within their first bytes.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f]")
# Characters searched for a control character at a time, 1,048,576 (a single character: no match
# spans two windows).
_WINDOW = 1 << 20
# An export of this many conversations shows a progress bar while it is read.
PROGRESS_CONVERSATIONS = 500


@dataclass(frozen=True, slots=True)
class Source:
    """The file as read: its bytes (a Cursor rules folder: its rules, joined) and their digest."""

    fmt: str
    path: str
    data: bytes
    digest: str


@dataclass
class Reading:
    """What the file holds for the import core: chunks, or a JSON export's records."""

    content: list[Chunk] | ParsedExport
    # Why no chunk came out, when that makes the file an error; None for structured input (an
    # export or a memory list), where holding nothing is a valid, empty result.
    empty: str | None = None
    warnings: list[str] = field(default_factory=list)
    conversations: int | None = None  # a ChatGPT export: how many conversations it holds


def load(fmt: str, path: str) -> Source:
    """Read the file (or Cursor's rules folder) and take its digest."""
    data = sources.read_cursor(path).encode() if fmt == "cursor" else files.read_bytes(path)
    return Source(fmt, path, data, hashlib.sha256(data).hexdigest())


def _control_byte(text: str) -> re.Match[str] | None:
    """The first control character that marks a binary file, searched a window at a time: one
    search of 64 MiB of text holds the GIL, and the daemon's event loop with it, for about 0.2 s
    (the reading runs in a worker thread)."""
    for start in range(0, len(text), _WINDOW):
        found = _CONTROL.search(text, start, start + _WINDOW)
        if found is not None:
            return found
    return None


def text_of(path: str, data: bytes) -> str:
    """The file as UTF-8 text, refusing a zip archive or any other binary file."""
    if data.startswith(chatgpt.ZIP_MAGIC):
        raise files.unreadable(path, "it is a zip archive, not text")
    text = files.decode(path, data)
    bad = _control_byte(text)
    if bad is not None:
        offset = len(text[: bad.start()].encode())
        raise files.unreadable(path, f"not text (control byte 0x{ord(bad.group()):02x} at offset {offset})")
    return text


def read(source: Source, steps: Steps | None = None) -> Reading:
    """What the import core gets from the file, by the format's rules."""
    fmt, path, data = source.fmt, source.path, source.data
    if fmt == "json":
        if not data.strip():
            raise FormatError("the file is empty")
        return Reading(export_doc.parse_export(data))
    if fmt == "chatgpt":
        return _chatgpt(path, data, steps or Steps.quiet())
    text = text_of(path, data)
    if fmt == "claude":
        return _claude(path, data, text)
    name = os.path.basename(path)
    if fmt == "cursor":
        return _text(chunking.parse_cursor(text), text)
    if fmt == "markdown":
        return _text(chunking.parse_markdown(text), text)
    return _text(chunking.parse_file(text, name), text)


def _text(chunks: list[Chunk], text: str) -> Reading:
    if not text.strip():
        empty = "the file is empty"
    elif not chunking.strip_hippo_blocks(text).strip():
        empty = "it holds nothing but hippo's own instruction block"
    else:
        empty = "it holds no text to import (every piece is under 10 characters)"
    return Reading(chunks, empty=empty)


def _claude(path: str, data: bytes, text: str) -> Reading:
    """CLAUDE.md by the markdown rule, or Claude's memory.json (a memory list, as ChatGPT's)."""
    document = chatgpt.json_document(data, json_file=path.lower().endswith(".json"))
    if document is not None:
        found = chatgpt.sniff_json(*document, expected=f"expected {chatgpt.MEMORY_LIST}")
        if found.conversations is not None:
            raise FormatMismatch("it is ChatGPT's conversation export, not Claude's", "chatgpt")
        return _memories(found)
    return _text(chunking.parse_claude_markdown(text), text)


def _memories(found: chatgpt.ChatGPTFile) -> Reading:
    reading = Reading(found.memories or [])
    if found.passed_over:
        reading.warnings.append(f"{plural(found.passed_over, 'item')} of the list held no text: passed over")
    return reading


def _chatgpt(path: str, data: bytes, steps: Steps) -> Reading:
    """ChatGPT's data export (its zip, or the conversations.json inside), or a memory list."""
    if not data.strip():
        raise FormatError("the file is empty")
    json_file = path.lower().endswith(".json")
    found = chatgpt.parse(data, lambda raw: text_of(path, raw), json_file=json_file)
    if found.conversations is None:
        reading = _memories(found)
        if found.from_text:
            reading.empty = "it holds no line of 10 characters or more"
        return reading
    conversations = found.conversations
    shown = len(conversations) >= PROGRESS_CONVERSATIONS
    steps.begin("reading conversations", len(conversations), shown=shown)
    extracted = chatgpt.extract_conversations(conversations, steps)
    steps.end()
    reading = Reading(extracted.chunks, conversations=len(conversations))
    if extracted.secrets:
        reading.warnings.append(f"{plural(extracted.secrets, 'item')} looked like a secret: not stored")
    if extracted.not_remembered:
        marked = plural(extracted.not_remembered, "conversation")
        reading.warnings.append(f'{marked} marked "don\'t remember": passed over')
    if conversations and not extracted.chunks and not extracted.secrets:
        reading.warnings.append(
            f"nothing said in {plural(len(conversations), 'conversation')} reads as a decision, rule, "
            "error, preference or spec item"
        )
    return reading
