"""`import --chatgpt`: ChatGPT's data export, or a list of ChatGPT memories (ingest.md §2).

The data export (Settings → Data controls → Export) is a zip holding `conversations.json`: a list of
conversations, each a tree of message nodes (`mapping`) in which edits and regenerations branch off,
with `current_node` the last node of the branch the user kept. What the user said on that branch
goes through capture's extraction heuristics (extract.py); the assistant's words, tool output,
system and hidden messages (custom instructions among them) are not the user's statements.

A memory list is JSON (`{"memories": [...]}` or an array of strings or objects with `content`, else
`text`), or text with one memory per line. Markdown is neither and is refused, so a heading never
becomes a memory. Pure functions over bytes and values; the handler runs them in a worker thread.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from hippod.calls.progress import Steps
from hippod.ingest.chunking import LINE_BULLET, Chunk, FormatError, not_json
from hippod.ingest.extract import extract
from hippod.ingest.files import MAX_FILE_BYTES
from hippod.ingest.transcript import USER_CHARS
from hippod.model.secrets import looks_secret

EXPORT_NAME = "conversations.json"
ZIP_MAGIC = b"PK\x03\x04"
# What the user typed in these content types; others (user_editable_context: the custom instructions)
# are settings, not something said in the conversation.
USER_CONTENT = frozenset({"text", "multimodal_text"})
# Code the user pasted is not a statement: its comments would read as rules.
_FENCED = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)
_MARKDOWN = (
    (re.compile(r"^#{1,6}\s+\S"), "a markdown heading"),
    (re.compile(r"^(```|~~~)"), "a markdown code fence"),
    (re.compile(r"^\|.*\|$"), "a markdown table row"),
)
# A conversation is more work than a chunk: the reading step hears of every 50th.
CONVERSATIONS_PER_TICK = 50


class FormatMismatch(FormatError):
    """The file is well formed, but for another format flag: `flag` names it."""

    def __init__(self, message: str, flag: str) -> None:
        super().__init__(message)
        self.flag = flag


# --- the data export ---------------------------------------------------------------------------------


class Author(msgspec.Struct):
    role: str = ""


class Content(msgspec.Struct):
    content_type: str = ""
    # Strings or objects (image, audio and file pointers): kept raw, decoded only for the user's turns.
    parts: list[msgspec.Raw] | None = None


class MessageMeta(msgspec.Struct):
    is_visually_hidden_from_conversation: bool | None = None


class Message(msgspec.Struct):
    author: Author | None = None
    content: Content | None = None
    metadata: MessageMeta | None = None


class Node(msgspec.Struct):
    message: Message | None = None
    parent: str | None = None
    children: list[str] | None = None


class Conversation(msgspec.Struct, kw_only=True):
    mapping: dict[str, Node]
    title: str | None = None
    current_node: str | None = None
    # Set on a chat the user asked ChatGPT not to remember.
    is_do_not_remember: bool | None = None


class _Part(msgspec.Struct):
    """An object part; a voice message carries what the user said as an `audio_transcription`."""

    content_type: str = ""
    text: str | None = None


_decode_part = msgspec.json.Decoder(str | _Part).decode
_decode_conversation = msgspec.json.Decoder(Conversation).decode
_decode_top = msgspec.json.Decoder(list[msgspec.Raw] | dict[str, msgspec.Raw]).decode


def branch(conversation: Conversation) -> list[Message]:
    """The messages of the branch that ends at `current_node`, oldest first.

    Without a usable `current_node`, the branch follows each node's last child from the root (the
    newest edit or regeneration).
    """
    mapping = conversation.mapping
    path: list[Message] = []
    seen: set[str] = set()
    node_id = conversation.current_node
    if node_id in mapping:
        while node_id is not None and node_id in mapping and node_id not in seen:
            seen.add(node_id)
            node = mapping[node_id]
            if node.message is not None:
                path.append(node.message)
            node_id = node.parent
        path.reverse()
        return path
    roots = [key for key, node in mapping.items() if node.parent is None or node.parent not in mapping]
    node_id = roots[0] if roots else None
    while node_id is not None and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        if node.message is not None:
            path.append(node.message)
        children = [c for c in node.children or () if c in mapping]
        node_id = children[-1] if children else None
    return path


def _part_text(raw: msgspec.Raw) -> str | None:
    try:
        part = _decode_part(raw)
    except msgspec.ValidationError:
        return None
    if isinstance(part, str):
        return part
    return part.text if part.content_type == "audio_transcription" else None


def said(message: Message) -> str | None:
    """What the user typed (or spoke) in this message, or None for anything else."""
    if message.author is None or message.author.role != "user" or message.content is None:
        return None
    if message.metadata is not None and message.metadata.is_visually_hidden_from_conversation:
        return None
    if message.content.content_type not in USER_CONTENT:
        return None
    texts = [t for t in map(_part_text, message.content.parts or ()) if t and t.strip()]
    return "\n".join(texts).strip() or None


def user_texts(conversation: Conversation) -> list[str]:
    """The user's messages on the kept branch, pasted code removed, each cut as capture cuts them."""
    out: list[str] = []
    for message in branch(conversation):
        text = said(message)
        if text is not None:
            text = _FENCED.sub("", text).strip()[:USER_CHARS]
            if text:
                out.append(text)
    return out


@dataclass
class Extracted:
    """What the user said across an export, as chunks tagged with capture's category."""

    chunks: list[Chunk] = field(default_factory=list)
    not_remembered: int = 0  # conversations marked "do not remember": passed over
    secrets: int = 0


def extract_conversations(conversations: list[Conversation], steps: Steps | None = None) -> Extracted:
    """Run capture's heuristics over each user message of each conversation, in export order; the
    current step of `steps` hears how many conversations have been read."""
    out = Extracted()
    for conversation in (steps or Steps.quiet()).track(conversations, every=CONVERSATIONS_PER_TICK):
        if conversation.is_do_not_remember:
            out.not_remembered += 1
        else:
            for text in user_texts(conversation):
                for item in extract(text):
                    if looks_secret(item.text):
                        out.secrets += 1
                    else:
                        out.chunks.append(Chunk(item.text, [item.category]))
    return out


def _conversations(raws: list[msgspec.Raw]) -> list[Conversation]:
    out: list[Conversation] = []
    for n, raw in enumerate(raws, 1):
        try:
            out.append(_decode_conversation(raw))
        except msgspec.ValidationError as exc:
            raise FormatError(f"conversation {n} is not in the export's shape ({exc})") from None
    return out


# --- sniffing --------------------------------------------------------------------------------------


@dataclass
class ChatGPTFile:
    """What a `--chatgpt` file turned out to hold: conversations, or memories (as chunks)."""

    conversations: list[Conversation] | None = None
    memories: list[Chunk] | None = None
    passed_over: int = 0  # items of a memory list that hold no text
    from_text: bool = False  # the memories came one per line of text, not from JSON


def unzip_export(data: bytes) -> bytes:
    """`conversations.json` out of the export's zip (the shallowest one, if the zip nests copies)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = [i for i in archive.infolist() if i.filename.rsplit("/", 1)[-1] == EXPORT_NAME]
            if not names:
                raise FormatError(f"the zip archive holds no {EXPORT_NAME}")
            info = min(names, key=lambda i: (i.filename.count("/"), i.filename))
            if info.file_size > MAX_FILE_BYTES:
                size = info.file_size / (1024 * 1024)
                raise FormatError(f"its {info.filename} is {size:.1f} MiB, over the 64 MiB limit")
            return archive.read(info)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as exc:
        raise FormatError(f"not a readable zip archive ({exc})") from None


Top = list[msgspec.Raw] | dict[str, msgspec.Raw]


class _NotJSON(FormatError):
    pass


def json_top(data: bytes) -> Top:
    """The document's top level, its items left undecoded; a FormatError when it is not JSON."""
    try:
        return _decode_top(data)
    except msgspec.ValidationError:  # JSON, but a string or a number
        raise FormatError("expected a JSON object or array") from None
    except msgspec.DecodeError as exc:
        raise _NotJSON(not_json(data, exc)) from None
    except RecursionError:
        raise FormatError("the JSON is nested too deeply") from None


def json_document(data: bytes, *, json_file: bool) -> tuple[Top, bytes] | None:
    """(the top level, the bytes it was read from) when `data` is a JSON document, None when it is
    text (which may start with a bracket). A BOM and leading space are passed over. A `json_file`
    (named `*.json`) that is not JSON is refused, not read as text: a torn download must not become
    memories."""
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped[:1] in (b"{", b"["):
        try:
            return json_top(stripped), stripped
        except _NotJSON:
            if json_file:
                raise
            return None
    if json_file and stripped:
        raise FormatError("not valid JSON (it does not start with { or [)")
    return None


def _holds_mapping(raw: msgspec.Raw) -> bool:
    if bytes(raw).lstrip()[:1] != b"{":
        return False
    keys = msgspec.json.decode(raw, type=dict[str, msgspec.Raw])
    return "mapping" in keys


MEMORY_LIST = 'a memory list ({"memories": [...]} or a JSON array)'
EXPECTED = f"expected ChatGPT's {EXPORT_NAME} (a list of conversations) or {MEMORY_LIST}"


def sniff_json(top: Top, data: bytes, *, expected: str = EXPECTED) -> ChatGPTFile:
    """A JSON document: the export's conversations (an array, `{"conversations": [...]}`, or one
    conversation), or a memory list. `expected` is what a document of another shape is told."""
    try:
        if isinstance(top, dict):
            if "mapping" in top:
                return ChatGPTFile(conversations=_conversations([msgspec.Raw(data)]))
            if "conversations" in top:
                raws = msgspec.json.decode(top["conversations"], type=list[msgspec.Raw])
                return ChatGPTFile(conversations=_conversations(raws))
            if "memories" not in top:
                raise FormatError(expected)
            raws = msgspec.json.decode(top["memories"], type=list[msgspec.Raw])
        else:
            if _holds_conversations(top):
                return ChatGPTFile(conversations=_conversations(top))
            raws = top
    except msgspec.ValidationError:
        raise FormatError('expected "conversations" or "memories" to be a JSON array') from None
    return memory_list(raws)


def _holds_conversations(raws: list[msgspec.Raw]) -> bool:
    """Whether an array is the export's list of conversations (judged by its first item)."""
    return bool(raws) and _holds_mapping(raws[0])


def _item_text(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in ("content", "text"):
            if isinstance(item.get(key), str):
                return str(item[key])
    return None


def memory_list(raws: list[msgspec.Raw]) -> ChatGPTFile:
    """Memories from a JSON list: strings, or objects with `content` (else `text`).

    Items with no text are passed over and counted; a list in which no item holds text is not a
    memory list at all.
    """
    chunks: list[Chunk] = []
    for raw in raws:
        text = _item_text(msgspec.json.decode(raw))
        if text is not None:
            chunks.append(Chunk(text))
    if raws and not chunks:
        raise FormatError('no item of the list holds text (expected strings or objects with "content")')
    return ChatGPTFile(memories=chunks, passed_over=len(raws) - len(chunks))


def markdown_line(text: str) -> tuple[int, str] | None:
    """(line number, what it is) of the first line that makes the text markdown, not a list."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        for pattern, what in _MARKDOWN:
            if pattern.match(stripped):
                return number, what
    return None


def text_memories(text: str) -> list[Chunk]:
    """One memory per non-empty line, leading `- `, `* `, `• ` removed; markdown is refused."""
    found = markdown_line(text)
    if found is not None:
        number, what = found
        raise FormatMismatch(
            f"it is markdown (line {number} is {what}), not ChatGPT's export or a memory list",
            "markdown",
        )
    return [Chunk(LINE_BULLET.sub("", line.strip(), count=1)) for line in _lines(text)]


def _lines(text: str) -> Iterator[str]:
    return (line for line in text.splitlines() if line.strip())


def parse(data: bytes, text: Callable[[bytes], str], *, json_file: bool = False) -> ChatGPTFile:
    """Whatever a `--chatgpt` file holds. `text` decodes bytes that are not JSON (and refuses
    what is not text); a zip is read as the data export's archive. A `json_file` (named `*.json`)
    that does not parse is refused, not read as lines: a torn download must not become memories."""
    if data.startswith(ZIP_MAGIC):
        data = unzip_export(data)
        return sniff_json(json_top(data), data)
    document = json_document(data, json_file=json_file)
    if document is not None:
        return sniff_json(*document)
    return ChatGPTFile(memories=text_memories(text(data)), from_text=True)
