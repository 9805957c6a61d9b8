"""Reading Cursor's rules for an import: a `.cursorrules` file or a `.cursor/rules/` folder.

Blocking file I/O: the handler runs these in a worker thread.
"""

from __future__ import annotations

import os

from hippod.ingest.chunking import strip_front_matter
from hippod.ingest.files import (
    MAX_FILE_BYTES,
    decode,
    os_problem,
    read_bytes,
    read_text,
    too_large,
    unreadable,
)

CURSOR_RULE_SUFFIXES = (".mdc", ".md")


def read_cursor(path: str) -> str:
    """A `.cursorrules` file, or every `*.mdc`/`*.md` rule under a `.cursor/rules/` folder (sorted
    by path, front matter removed), one after the other with a blank line between."""
    if not os.path.isdir(path):
        text = read_text(path)
        return strip_front_matter(text) if path.endswith(CURSOR_RULE_SUFFIXES) else text
    try:
        files = sorted(
            os.path.join(folder, name)
            for folder, _, names in os.walk(path, onerror=_raise)
            for name in names
            if name.endswith(CURSOR_RULE_SUFFIXES)
        )
    except OSError as exc:
        raise unreadable(path, os_problem(exc)) from None
    if not files:
        raise unreadable(path, "the folder holds no *.mdc or *.md rule files")
    texts: list[str] = []
    total = 0
    for file in files:
        data = read_bytes(file)
        total += len(data)
        if total > MAX_FILE_BYTES:
            raise too_large(path, total)
        texts.append(strip_front_matter(decode(file, data)))
    return "\n\n".join(texts)


def _raise(exc: OSError) -> None:
    raise exc
