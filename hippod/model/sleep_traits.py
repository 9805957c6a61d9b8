"""What sleep reads from a memory's text alone (sleep.md §5-§7), kept with the store between sleeps.

Tokenizing a text, finding its distinctive tokens and conflict phrases, and judging it as junk take
most of a sleep's pass over a large store, yet none of it changes until the text does. So a sleep
keeps these traits of every text it reads (store/sqlite/sleep_traits.py) and the next one reads
them back instead of working them out again: a daily sleep then does this work for the new texts only.
"""

from __future__ import annotations

from dataclasses import dataclass

from hippod.model import conflicts
from hippod.model.dedupe import junk_reason, junk_warning
from hippod.model.tokenize import tokenize


@dataclass(frozen=True, slots=True)
class Traits:
    """A text's traits, as the sleep's phases use them."""

    # Token lists are joined by single spaces (no token holds one): the form they are kept in, and
    # the one a sleep's scan numbers a page of at once (wordsets.TokenColumn.extend_joined).
    words: str  # its tokens (recall.md §3), each once, in order: merge and dedupe
    # Its distinctive tokens (sleep.md §7.1), sorted, when it can be one side of a conflict; else "".
    distinct: str
    positive: bool  # its window holds a P phrase of some conflict rule
    negative: bool  # ... an N phrase
    takes_part: bool  # conflicts.takes_part
    junk: str | None  # why it is junk to delete (sleep.md §6), or None
    warning: str | None  # why it looks weak, when it is not junk; or None


def traits_of(content: str) -> Traits:
    """Work out a text's traits."""
    tokens = conflicts.distinctive_tokens(content)
    positive, negative = conflicts.sides(content)
    takes_part = conflicts.takes_part(tokens, (positive, negative))
    reason = junk_reason(content)
    return Traits(
        words=" ".join(dict.fromkeys(tokenize(content))),
        distinct=" ".join(sorted(tokens)) if takes_part else "",
        positive=positive,
        negative=negative,
        takes_part=takes_part,
        junk=reason,
        warning=None if reason is not None else junk_warning(content),
    )
