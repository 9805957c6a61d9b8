"""Appending to the daemon's logs and notes without following a link planted at their path."""

from __future__ import annotations

import io
import logging.handlers
import os

_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def open_append(path: str) -> io.TextIOWrapper:
    """`path` opened for appending UTF-8 text (0600 when new); OSError (ELOOP) when it is a symbolic link."""
    return open(os.open(path, _APPEND, 0o600), "a", encoding="utf-8")


class RotatingLog(logging.handlers.RotatingFileHandler):
    """A RotatingFileHandler that opens its file with O_NOFOLLOW (rotation renames, which follow no link)."""

    def _open(self) -> io.TextIOWrapper:
        return open(
            os.open(self.baseFilename, _APPEND, 0o600), "a", encoding=self.encoding, errors=self.errors
        )
