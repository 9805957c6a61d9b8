"""Checks on command-line values, shared by every verb's argument builder (usage errors, exit 2)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import TypeVar

from hippoctl.protocol import validate


class UsageError(Exception):
    """Bad arguments: exit 2 without contacting the daemon."""


def read_text(text: str) -> str:
    """A memory's text from the argument, or from stdin for "-": trimmed and checked."""
    if text == "-":
        # One byte over the limit is left for a final newline, which trimming removes.
        limit = validate.MAX_CONTENT_BYTES
        text = stdin_text(limit + 1, f"memory text is more than 1 MiB ({limit} bytes)")
    stripped = text.strip()
    check(validate.content_problem(stripped))
    return stripped


def stdin_text(limit: int, too_big: str) -> str:
    """Stdin as text: more than `limit` bytes are refused with the message `too_big`, and bytes that
    are not UTF-8 as in an argument."""
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise UsageError(too_big)
    check(validate.utf8_problem(data, "stdin"))
    return data.decode("utf-8")


def tags(given: list[str]) -> list[str]:
    """`--tag` values: valid UTF-8, trimmed, repeats merged, and within the tag limits."""
    cleaned = validate.clean_tags([utf8(t, "--tag") for t in given])
    check(validate.tags_problem(cleaned))
    return cleaned


def count_tag_flags(argv: list[str]) -> None:
    """Refuse more `--tag` flags than a memory may have before argparse reads them: its time grows
    with the square of the number of options, ten seconds for 10,000."""
    check(validate.tag_count_problem(sum(1 for word in argv if word == "--tag" or word.startswith("--tag="))))


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


# Actions that only look: when a mistyped word is as close to one of these as to an action that
# changes something (`daemon stat`: status or start), the one that only looks is suggested.
READ_ONLY_ACTIONS = frozenset({"status", "list", "show", "get", "read"})


def closest(word: str, names: Iterable[str]) -> str | None:
    """The name a mistyped word most likely meant, or None when none is close.

    A name the word begins (`claude` for claude-code) comes before a name spelled alike, and among
    several candidates an action that only looks comes before one that changes something.
    """
    import difflib  # only on this error path

    choices = list(names)
    starts = [name for name in choices if word and name.startswith(word)]
    candidates = starts or difflib.get_close_matches(word, choices, n=3, cutoff=0.75)
    looking = [name for name in candidates if name in READ_ONLY_ACTIONS]
    if looking:
        return looking[0]
    if len(starts) > 1:
        # `c` begins several names: let spelling decide, if any is close.
        close = difflib.get_close_matches(word, starts, n=1, cutoff=0.75)
        return close[0] if close else None
    return candidates[0] if candidates else None


def did_you_mean(word: str, names: Iterable[str]) -> str:
    """`; did you mean 'recall'?` for the name closest to a mistyped word, or "" when none is close."""
    found = closest(word, names)
    return "" if found is None else f"; did you mean {found!r}?"


def unknown_option(word: str, options: Iterable[str]) -> str:
    """The one-line error for an option no parser knows, with the closest known one."""
    flag = word.split("=", 1)[0]
    return f"unknown option {flag!r}{did_you_mean(flag, options)}"


class Number:
    """An option's `type=`: a whole number (or with `real`, any number) within the option's range.

    Parser (hippoctl/args/parser.py) calls `parse` with the option's name, so every numeric option of every
    verb is refused the same way: `--budget must be 0 or more`, exit 2.
    """

    def __init__(
        self, low: float, high: float | None = None, *, above: bool = False, real: bool = False
    ) -> None:
        self.low, self.high, self.above, self.real = low, high, above, real

    def __call__(self, text: str) -> float:
        return self.parse(text, "the value")

    def parse(self, text: str, flag: str) -> float:
        """The number `text` holds for `flag`; a UsageError naming the flag when it is not one in range."""
        try:
            value: float = float(text) if self.real else int(text)
        except ValueError:
            kind = "a number" if self.real else "a whole number"
            raise UsageError(f"{flag} needs {kind}, not {text!r}") from None
        if not self.real:
            in_wire_range(int(value), flag)
        check(validate.number_problem(flag, value, self.low, self.high, above=self.above))
        return value


class MemoryId:
    """An argument's `type=` for a memory's id: refused when empty or blank (`inspect ""`), which would
    name no memory, before the daemon is asked."""

    def __call__(self, text: str) -> str:
        return self.parse(text, None)

    def parse(self, text: str, flag: str | None) -> str:
        """`text` when it can be a memory's id; a UsageError naming the option (or the id) otherwise."""
        what = "the memory id" if flag is None else flag
        check(validate.memory_id_problem(text, what))
        return utf8(text, what)


MEMORY_ID = MemoryId()
COUNT = Number(0)  # budgets, limits and counts: 0 or more
DAYS = Number(1)
FRACTION = Number(0, 1, real=True)
SECONDS = Number(0, above=True, real=True)


def refuse_options(args: argparse.Namespace, verb: str, allowed: set[str], names: dict[str, str]) -> None:
    """A usage error naming the first option given that `verb <action>` does not take."""
    for dest, flag in names.items():
        value = getattr(args, dest)
        if dest not in allowed and value not in (None, [], False):
            raise UsageError(f"{flag} does not go with `{verb} {args.action}`")


def needed(value: str | None, flag: str, what: str) -> str:
    """A text option `what` cannot do without, trimmed of nothing but checked to be there and UTF-8."""
    if value is None or not value.strip():
        raise UsageError(f"{what} needs {flag}")
    return utf8(value, flag)
