"""Reading a file named in a request: the daemon reads it, as the same user (ingest.md, preamble).

Every failure is one line naming the file: `not_found`, `unreadable` (a directory, no permission,
not UTF-8 where text is needed) or `file_too_large` (over 64 MiB). Blocking: call from a worker
thread when the file may be large.
"""

from __future__ import annotations

import errno
import os

from hippod.base.errors import HippoError

MAX_FILE_BYTES = 64 * 1024 * 1024


def unreadable(path: str, problem: str, *, code: str = "unreadable") -> HippoError:
    return HippoError(code, f"cannot read {path}: {problem}")


def os_problem(exc: OSError) -> str:
    """What an OSError means, in a few words."""
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EISDIR:
        return "it is a directory"
    return exc.strerror or exc.__class__.__name__


def too_large(path: str, size: int) -> HippoError:
    return HippoError(
        "file_too_large",
        f"cannot read {path}: it is {size / (1024 * 1024):.1f} MiB, over the 64 MiB limit",
        hint="split the file into parts",
    )


def read_bytes(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The whole file, refusing a directory, a missing or unreadable file, and one over `limit`."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                raise too_large(path, size)
            data = handle.read(limit + 1)
    except OSError as exc:
        code = "not_found" if exc.errno == errno.ENOENT else "unreadable"
        raise unreadable(path, os_problem(exc), code=code) from None
    if len(data) > limit:  # a file that grew, or a device reporting no size
        raise too_large(path, len(data))
    return data


def decode(path: str, data: bytes) -> str:
    """UTF-8 text (a byte-order mark is dropped), or an error naming the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = f"byte 0x{data[exc.start]:02x} at offset {exc.start}"
        raise unreadable(path, f"not UTF-8 text ({bad})") from None


def read_text(path: str) -> str:
    """The file as UTF-8 text, refusing one that is not."""
    return decode(path, read_bytes(path))


def read_text_lenient(path: str) -> str:
    """The file as text, undecodable bytes replaced (transcripts and logs may hold stray bytes)."""
    return read_bytes(path).decode("utf-8", errors="replace")
