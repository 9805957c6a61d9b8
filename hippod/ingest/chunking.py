"""Format parsers of `import` (ingest.md §2): text in, ordered chunks out, with their section tags.

Each parser is a pure function. Format tags (`imported`, `chatgpt` ...) are added by the import
core, which also trims, drops and cuts chunks (ingest.md §1); parsers only split.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


class FormatError(ValueError):
    """The input is of the right kind (e.g. JSON) but not in the shape the format needs."""


# A \uD800-\uDBFF escape not followed by a \uDC00-\uDFFF one, or one of those not preceded by the first.
_LONE_SURROGATE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def not_json(data: bytes, cause: Exception) -> str:
    """Why `data` is not JSON, in words: a lone UTF-16 surrogate escape, which JSON text may spell
    but no text can hold, is named with its byte offset; otherwise the decoder's own words (which
    for a surrogate depend on where it falls: "truncated", "hex escape")."""
    found = _LONE_SURROGATE.search(data)
    if found is not None:
        escape = found.group().decode()
        return f"not valid JSON: a lone UTF-16 surrogate ({escape}) at byte {found.start()} is not text"
    return f"not valid JSON ({cause})"


@dataclass(frozen=True, slots=True)
class Chunk:
    """One would-be memory: its text (not yet trimmed) and the section tags the parser found."""

    text: str
    tags: list[str] = field(default_factory=list)


HIPPO_BLOCK = re.compile(r"<!-- hippo:start -->.*?(?:<!-- hippo:end -->|\Z)", re.DOTALL)
HEADING = re.compile(r"^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
DASH_STAR_BULLET = re.compile(r"^(?:[-*]|\d+[.)])\s+")
LINE_BULLET = re.compile(r"^(?:- |\* |• )")
FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n.*?^---[ \t]*$\r?\n?", re.DOTALL | re.MULTILINE)
_SLUG_DROP = re.compile(r"[^a-z0-9 -]")
_DASH_RUNS = re.compile(r"-{2,}")
SLUG_MAX = 50


def slug(heading: str) -> str:
    """A section tag from a heading: lowercase, [a-z0-9 -] only, spaces to dashes, at most 50 chars.

    A dash left at the end by the 50-char cut is trimmed too.
    """
    text = _SLUG_DROP.sub(" ", heading.lower()).replace(" ", "-")
    text = _DASH_RUNS.sub("-", text).strip("-")
    return text[:SLUG_MAX].rstrip("-")


def strip_hippo_blocks(text: str) -> str:
    """Delete every `<!-- hippo:start -->` ... `<!-- hippo:end -->` block, markers included.

    A start marker with no end marker deletes to the end of the text: everything after it is
    hippo's own instruction block, which must never come back as a memory.
    """
    return HIPPO_BLOCK.sub("", text)


def strip_front_matter(text: str) -> str:
    """Remove a leading YAML front matter block (`---` ... `---`), as Cursor's .mdc rules have."""
    return FRONT_MATTER.sub("", text, count=1)


def _strip_marker(line: str) -> str:
    return BULLET.sub("", line, count=1)


class _Collector:
    """Builds chunks from lines: start one, append to it, end it."""

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self.parts: list[str] = []
        self.tags: list[str] = []

    def start(self, text: str, tags: list[str] | None = None) -> None:
        self.end()
        self.parts = [text]
        self.tags = tags or []

    def append(self, text: str, tags: list[str] | None = None) -> None:
        if self.parts:
            self.parts.append(text)
        else:
            self.start(text, tags)

    @property
    def open(self) -> bool:
        return bool(self.parts)

    def end(self) -> None:
        if self.parts:
            self.chunks.append(Chunk(" ".join(self.parts), self.tags))
        self.parts = []


# --- claude markdown (and --file .md) ---------------------------------------------------------------


def parse_claude_markdown(text: str) -> list[Chunk]:
    """CLAUDE.md: hippo blocks deleted; a heading line (kept with its #s) starts a chunk, each bullet
    or numbered item is a chunk of its own (marker removed), a blank line ends a chunk, and any
    other line is appended to the current chunk after a space."""
    out = _Collector()
    for raw in strip_hippo_blocks(text).splitlines():
        line = raw.strip()
        if not line:
            out.end()
        elif HEADING.match(line):
            out.start(line)
        elif BULLET.match(line):
            out.start(_strip_marker(line))
        else:
            out.append(line)
    out.end()
    return out.chunks


# --- cursor -----------------------------------------------------------------------------------------


def parse_cursor(text: str) -> list[Chunk]:
    """.cursorrules (or one rules file, front matter already removed): each numbered item or `-`/`*`
    bullet is a chunk; blank lines and a lone `#` end a chunk; other lines are appended.

    A markdown heading line (`# Title`) also ends a chunk and is not kept: it titles the rules
    below it and is no rule itself.
    """
    out = _Collector()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.strip("#") == "" or HEADING.match(line):
            out.end()
        elif DASH_STAR_BULLET.match(line):
            out.start(DASH_STAR_BULLET.sub("", line, count=1))
        else:
            out.append(line)
    out.end()
    return out.chunks


# --- structured markdown ----------------------------------------------------------------------------


def parse_markdown(text: str) -> list[Chunk]:
    """Structured markdown: headings set the section (tag `slug(heading)`); each bullet or numbered
    item plus its indented continuation lines is a chunk; a plain paragraph is one chunk. Text
    before the first heading has no section tag."""
    out = _Collector()
    section: list[str] = []
    in_item = False
    for raw in text.splitlines():
        line = raw.strip()
        heading = HEADING.match(line)
        if not line:
            out.end()
        elif heading:
            out.end()
            tag = slug(heading.group(2))
            section = [tag] if tag else []
        elif BULLET.match(line):
            out.start(_strip_marker(line), section)
            in_item = True
            continue
        elif out.open and (not in_item or raw[:1] in (" ", "\t")):
            out.append(line)
            continue
        else:
            out.start(line, section)
        in_item = False
    out.end()
    return out.chunks


# --- any text file ----------------------------------------------------------------------------------

_BLANK_LINES = re.compile(r"\n[ \t]*\n")


def parse_file(text: str, name: str) -> list[Chunk]:
    """`--file`: `.md`/`.mdx` by the CLAUDE.md rule; otherwise blank-line-separated paragraphs when
    there are at least two, else one chunk per non-empty line."""
    if name.lower().endswith((".md", ".mdx")):
        return parse_claude_markdown(text)
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    paragraphs = [p.strip() for p in _BLANK_LINES.split(normalised) if p.strip()]
    if len(paragraphs) >= 2:
        return [Chunk(p) for p in paragraphs]
    return [Chunk(line.strip()) for line in normalised.split("\n") if line.strip()]
