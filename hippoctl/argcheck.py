"""Checks on command-line values, shared by every verb's argument builder (usage errors, exit 2)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TypeVar

from hippoctl.protocol import validate


class UsageError(Exception):
    """Bad arguments: exit 2 without contacting the daemon."""


def read_text(text: str) -> str:
    """A memory's text from the argument, or from stdin for "-": trimmed and checked."""
    if text == "-":
        # One byte past the limit is enough to know the text is too long.
        data = sys.stdin.buffer.read(validate.MAX_CONTENT_BYTES + 1)
        text = data.decode("utf-8", errors="replace")
    stripped = text.strip()
    check(validate.content_problem(stripped))
    return stripped


def check(problem: str | None) -> None:
    if problem is not None:
        raise UsageError(problem)


_Text = TypeVar("_Text", str, None)


def utf8(value: _Text, name: str) -> _Text:
    """Refuse arguments that cannot be sent (bytes the shell passed that are not UTF-8)."""
    try:
        if value is not None:
            value.encode()
    except UnicodeEncodeError:
        raise UsageError(f"{name} is not valid UTF-8") from None
    return value


# The wire carries 64-bit integers: a larger number could not even be encoded into the request.
WIRE_INT_LIMIT = 2**63


def in_wire_range(value: int | None, flag: str) -> None:
    """Refuse a number the request could not carry (usage error, exit 2)."""
    if value is not None and not -WIRE_INT_LIMIT <= value < WIRE_INT_LIMIT:
        raise UsageError(f"{flag} is out of range: {value}")


def did_you_mean(word: str, names: Iterable[str], *, quote: bool = True) -> str:
    """`; did you mean 'recall'?` for the name closest to a mistyped word, or "" when none is close."""
    import difflib  # only on this error path

    close = difflib.get_close_matches(word, list(names), n=1, cutoff=0.75)
    if not close:
        return ""
    return f"; did you mean {close[0]!r}?" if quote else f"; did you mean {close[0]}?"
