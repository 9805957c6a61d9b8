"""Writing changed data back into a JSON file's text while keeping the file's own layout.

A value that did not change keeps its exact text (spacing, escapes, number forms, key order); a
changed object or array keeps its braces, the whitespace inside them and its separators, and only
what is new is written, in the layout the file already uses (its indent, line endings, `: ` or `:`,
one line or many). So removing what an earlier edit added gives back the very bytes of before.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

_WHITESPACE = re.compile(r"[ \t\n\r\ufeff]*")
_DECODER = json.JSONDecoder()


@dataclass
class Node:
    """One value of the parsed text: where it is, and what it holds."""

    start: int
    end: int
    value: Any
    # An object's members: (key, where its key starts, where its value node is); an array's items.
    members: list[tuple[str, int, Node]] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)


@dataclass(frozen=True)
class Style:
    """How the file lays its values out, for the parts that are written anew."""

    indent: str | None  # one level of indentation; None for a file on one line
    newline: str
    colon: str  # between a key and its value
    comma: str  # between items of a one-line file
    ascii_only: bool


def _skip(text: str, at: int) -> int:
    match = _WHITESPACE.match(text, at)
    assert match is not None
    return match.end()


def _parse(text: str, at: int) -> Node:
    """The value starting at `at` (the text is known to be valid JSON)."""
    char = text[at]
    if char == "{":
        node = Node(at, at, {})
        at = _skip(text, at + 1)
        while text[at] != "}":
            key, after_key = scanstring(text, at + 1)
            value_at = _skip(text, _skip(text, after_key) + 1)  # past the colon
            child = _parse(text, value_at)
            node.members.append((key, at, child))
            node.value[key] = child.value
            at = _skip(text, child.end)
            if text[at] == ",":
                at = _skip(text, at + 1)
        node.end = at + 1
        return node
    if char == "[":
        node = Node(at, at, [])
        at = _skip(text, at + 1)
        while text[at] != "]":
            child = _parse(text, at)
            node.items.append(child)
            node.value.append(child.value)
            at = _skip(text, child.end)
            if text[at] == ",":
                at = _skip(text, at + 1)
        node.end = at + 1
        return node
    value, end = _DECODER.raw_decode(text, at)
    return Node(at, end, value)


def parse(text: str) -> Node:
    """The whole text as a tree of nodes (a leading byte-order mark and whitespace are skipped)."""
    return _parse(text, _skip(text, 0))


def same(a: Any, b: Any) -> bool:
    """Equal as JSON, where `1`, `1.0` and `true` differ and key order counts."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _second_start(root: Node) -> int | None:
    if len(root.members) > 1:
        return root.members[1][1]
    return root.items[1].start if len(root.items) > 1 else None


def style_of(text: str, root: Node) -> Style:
    """The layout of the file's top-level value: indent of its first line inside, line ending, the
    text between a key and its value, and (on one line) between items."""
    newline = "\r\n" if "\r\n" in text else "\n"
    first = root.members[0][1] if root.members else (root.items[0].start if root.items else None)
    indent: str | None = None
    if first is None or "\n" in text[root.start : root.end]:
        # An empty file-level object (`{}`) gets its first entries on lines of their own.
        lead = text[root.start + 1 : first] if first is not None else ""
        indent = lead.rsplit("\n", 1)[1] if "\n" in lead else "  "
    colon = ": "
    if root.members:
        _, key_at, child = root.members[0]
        between = text[scanstring(text, key_at + 1)[1] : child.start]
        if "\n" not in between:
            colon = between
    comma = ", " if colon.endswith(" ") else ","
    second = _second_start(root)
    if indent is None and second is not None:
        end = root.members[0][2].end if root.members else root.items[0].end
        comma = text[end:second]
    ascii_only = "\\u" in text and text.isascii()
    return Style(indent=indent, newline=newline, colon=colon, comma=comma, ascii_only=ascii_only)


def fresh(value: Any, style: Style, depth: int) -> str:
    """`value` written anew at `depth`, in the file's layout."""
    if style.indent is None:
        return json.dumps(value, ensure_ascii=style.ascii_only, separators=(style.comma, style.colon))
    text = json.dumps(
        value, ensure_ascii=style.ascii_only, indent=style.indent, separators=(",", style.colon)
    )
    return text.replace("\n", style.newline + style.indent * depth)


class _Writer:
    def __init__(self, text: str, style: Style) -> None:
        self.text = text
        self.style = style

    def value(self, node: Node, new: Any, depth: int) -> str:
        if same(node.value, new):
            return self.text[node.start : node.end]
        if isinstance(node.value, dict) and isinstance(new, dict):
            return self._object(node, new, depth)
        if isinstance(node.value, list) and isinstance(new, list):
            return self._array(node, new, depth)
        return fresh(new, self.style, depth)

    def _gaps(self, node: Node, starts: list[int], ends: list[int]) -> tuple[str, str, list[str]] | None:
        """The text after the opening bracket, before the closing one, and between neighbours (None
        for an empty container)."""
        if not starts:
            return None
        text = self.text
        lead = text[node.start + 1 : starts[0]]
        trail = text[ends[-1] : node.end - 1]
        between = [text[ends[i] : starts[i + 1]] for i in range(len(starts) - 1)]
        return lead, trail, between

    def _join(
        self,
        node: Node,
        pieces: list[tuple[int | None, str]],
        gaps: tuple[str, str, list[str]] | None,
        depth: int,
    ) -> str:
        """Put the pieces (each with the index of the old item it came from, or None) back between the
        brackets, reusing the old whitespace and separators wherever they fit."""
        open_, close = self.text[node.start], self.text[node.end - 1]
        if not pieces:
            return open_ + close
        style = self.style
        if gaps is not None:
            lead, trail, between = gaps
        elif style.indent is not None:
            # The container was empty: its items go on lines of their own, as the file's do.
            lead, trail, between = (
                style.newline + style.indent * (depth + 1),
                style.newline + style.indent * depth,
                [],
            )
        else:
            lead, trail, between = "", "", []
        if between:
            default = between[-1]
        elif "\n" in lead:
            default = "," + lead
        else:
            default = style.comma
        out = [open_, lead]
        for k, (origin, piece) in enumerate(pieces):
            if k:
                before = pieces[k - 1][0]
                fits = before is not None and origin is not None and before < len(between)
                out.append(between[before] if fits and before is not None else default)
            out.append(piece)
        out += [trail, close]
        return "".join(out)

    def _object(self, node: Node, new: dict[str, Any], depth: int) -> str:
        text = self.text
        old = {key: (index, key_at, child) for index, (key, key_at, child) in enumerate(node.members)}
        pieces: list[tuple[int | None, str]] = []
        for key, value in new.items():
            if key in old:
                index, key_at, child = old[key]
                head = text[key_at : child.start]
                pieces.append((index, head + self.value(child, value, depth + 1)))
            else:
                head = json.dumps(key, ensure_ascii=self.style.ascii_only) + self.style.colon
                pieces.append((None, head + fresh(value, self.style, depth + 1)))
        starts = [key_at for _, key_at, _ in node.members]
        ends = [child.end for _, _, child in node.members]
        return self._join(node, pieces, self._gaps(node, starts, ends), depth)

    def _array(self, node: Node, new: list[Any], depth: int) -> str:
        olds = node.items
        keys_old = [json.dumps(item.value) for item in olds]
        keys_new = [json.dumps(value) for value in new]
        pieces: list[tuple[int | None, str]] = []
        matcher = difflib.SequenceMatcher(a=keys_old, b=keys_new, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "delete":
                continue
            for k in range(j2 - j1):
                if op in ("equal", "replace") and i1 + k < i2:
                    pieces.append((i1 + k, self.value(olds[i1 + k], new[j1 + k], depth + 1)))
                else:
                    pieces.append((None, fresh(new[j1 + k], self.style, depth + 1)))
        gaps = self._gaps(node, [item.start for item in olds], [item.end for item in olds])
        return self._join(node, pieces, gaps, depth)


def render(text: str, new: Any) -> str:
    """`text` (valid JSON) changed to hold `new`, keeping everything of it that `new` keeps."""
    root = parse(text)
    writer = _Writer(text, style_of(text, root))
    return text[: root.start] + writer.value(root, new, 0) + text[root.end :]
