"""Words shared by the client's and the daemon's reply texts: a count with its noun in the right number,
the words that agree with a count (was/were, has/have, it/them), and a dry run's first line."""

from __future__ import annotations

# The first line of every dry run's reply (sleep, import, capture, invalidate, setup): one wording.
DRY_RUN = "Dry run: nothing was changed."
_SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh")
_VOWELS = frozenset("aeiou")
# The singular of a word that follows a count's number, and its form for every other count.
_AGREEING = {"was": "were", "is": "are", "has": "have", "it": "them"}


def plural_of(noun: str) -> str:
    """The regular English plural of `noun`: memory → memories, day → days, match → matches.

    The last word takes the ending, so "junk memory" becomes "junk memories".
    """
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in _VOWELS:
        return noun[:-1] + "ies"
    if noun.endswith(_SIBILANT_ENDINGS):
        return noun + "es"
    return noun + "s"


def plural(count: int, one: str, many: str | None = None) -> str:
    """`count` and its noun: "1 memory", "2 memories", "0 memories" (`many` for irregular nouns)."""
    if count == 1:
        return f"{count} {one}"
    return f"{count} {many if many is not None else plural_of(one)}"


def agree(count: int, one: str, many: str | None = None) -> str:
    """The form of `one` that agrees with `count`: "was" for 1, "were" for 0 or 2 (likewise is/are,
    has/have, it/them); `many` for any other word, e.g. agree(n, "a duplicate", "duplicates")."""
    if count == 1:
        return one
    return many if many is not None else _AGREEING[one]
