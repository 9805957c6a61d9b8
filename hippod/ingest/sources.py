"""Reading an import's input file (or Cursor's rules folder) for the daemon, with one-line errors.

Blocking file I/O: the handler runs these in a worker thread.
"""

from __future__ import annotations

import errno
import os

from hippod.errors import HippoError
from hippod.ingest.chunking import strip_front_matter

MAX_BYTES = 64 * 1024 * 1024
CURSOR_RULE_SUFFIXES = (".mdc", ".md")


def _unreadable(path: str, problem: str) -> HippoError:
    return HippoError("file_unreadable", f"cannot read {path}: {problem}")


def _os_problem(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EISDIR:
        return "it is a directory"
    return exc.strerror or exc.__class__.__name__


def _too_large(path: str, size: int) -> HippoError:
    return HippoError(
        "file_too_large",
        f"cannot import {path}: it is {size / (1024 * 1024):.1f} MiB, over the 64 MiB limit",
        hint="split the file and import the parts",
    )


def read_bytes(path: str, limit: int = MAX_BYTES) -> bytes:
    """The whole file, refusing a directory, a missing or unreadable file, and one over `limit`."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                raise _too_large(path, size)
            data = handle.read(limit + 1)
    except OSError as exc:
        raise _unreadable(path, _os_problem(exc)) from None
    if len(data) > limit:  # a file that grew, or a device reporting no size
        raise _too_large(path, len(data))
    return data


def decode(path: str, data: bytes) -> str:
    """UTF-8 text (a byte-order mark is dropped), or an error naming the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = f"byte 0x{data[exc.start]:02x} at offset {exc.start}"
        raise _unreadable(path, f"not UTF-8 text ({bad})") from None


def read_text(path: str) -> str:
    return decode(path, read_bytes(path))


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
        raise _unreadable(path, _os_problem(exc)) from None
    if not files:
        raise _unreadable(path, "the folder holds no *.mdc or *.md rule files")
    texts: list[str] = []
    total = 0
    for file in files:
        data = read_bytes(file)
        total += len(data)
        if total > MAX_BYTES:
            raise _too_large(path, total)
        texts.append(strip_front_matter(decode(file, data)))
    return "\n\n".join(texts)


def _raise(exc: OSError) -> None:
    raise exc
