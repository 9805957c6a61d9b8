"""Reading a file named in a request: the daemon reads it, as the same user (ingest.md, preamble)."""

from __future__ import annotations

import errno
import os

from hippod.errors import HippoError

MAX_FILE_BYTES = 64 * 1024 * 1024


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EISDIR:
        return "it is a directory"
    return exc.strerror or exc.__class__.__name__


def read_bytes(path: str) -> bytes:
    """The file's bytes; a one-line error naming the file when it is missing, unreadable or over 64 MiB."""
    try:
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, "is a directory")
        size = os.stat(path).st_size
        if size > MAX_FILE_BYTES:
            raise HippoError("file_too_large", f"{path} is {size} bytes; files over 64 MiB are refused")
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        code = "not_found" if exc.errno == errno.ENOENT else "unreadable"
        raise HippoError(code, f"cannot read {path}: {_reason(exc)}") from None
    if len(data) > MAX_FILE_BYTES:  # it grew after the size check
        raise HippoError("file_too_large", f"{path} is over 64 MiB; files over 64 MiB are refused")
    return data


def read_text(path: str) -> str:
    """The file as UTF-8 text (undecodable bytes replaced)."""
    return read_bytes(path).decode("utf-8", errors="replace")
