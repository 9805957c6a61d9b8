"""Reading the text of agents' note files (ingest.md §4): front matter, bullets under a heading,
and the transforms a note's text goes through before it becomes a memory."""

from __future__ import annotations

import re

MIN_CHARS = 10
MAX_CHARS = 1500
TRUNCATED = " [truncated]"

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+•]|\d+[.)])\s+(.*)$")
_EMAIL = re.compile(r"\b([A-Za-z0-9._%+-])[A-Za-z0-9._%+-]*@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)\b")


def split_front_matter(text: str) -> tuple[bool, str]:
    """(has front matter, body). Front matter is a leading `---` line up to the next `---` line."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return False, text
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return True, "".join(lines[index + 1 :])
    return False, text


def body_of(text: str) -> str:
    """The note text with any front matter removed."""
    return split_front_matter(text)[1]


def _heading_text(title: str) -> str:
    return " ".join(title.replace("*", "").replace("_", " ").split()).lower()


def bullets_under(text: str, headings: set[str]) -> list[str]:
    """Each bullet (with its indented continuation lines) in the sections whose heading is listed.

    Headings compare case-insensitively, without emphasis marks. A section ends at the next heading
    of the same or a higher level; a nested bullet is its own item.
    """
    wanted = {_heading_text(h) for h in headings}
    items: list[str] = []
    current: list[str] | None = None
    inside_level = 0
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if _heading_text(heading.group(2)) in wanted:
                inside_level = level
            elif inside_level and level <= inside_level:
                inside_level = 0
            current = None
            continue
        if not inside_level:
            continue
        bullet = _BULLET.match(line)
        if bullet:
            current = [bullet.group(2).strip()]
            items.append(current[0])
        elif not line.strip():
            current = None
        elif current is not None and line[:1].isspace():
            current.append(line.strip())
            items[-1] = " ".join(current)
        else:
            current = None
    return [item for item in items if item]


def mask_emails(text: str) -> str:
    """`jane.doe@ex.com` → `j***@ex.com`: the first character of the local part, then `***@domain`."""
    return _EMAIL.sub(lambda m: f"{m.group(1)}***@{m.group(2)}", text)


def cut(text: str) -> str:
    """At most 1,500 characters, marked ` [truncated]` when longer."""
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + TRUNCATED
