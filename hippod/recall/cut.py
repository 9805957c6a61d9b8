"""Cutting a memory's text to what is left of a budget, with a marker naming the memory and its size.

Every surface that hands memory text out (recall, context, the per-prompt hook, MCP, HTTP) cuts with
these functions, so a cut memory reads the same everywhere and `inspect` still shows it whole.
"""

from __future__ import annotations

from collections.abc import Callable

from hippod.recall.budget import tokens_of

# A cut that is not kept by --min-results must show at least this much of the memory's text: a
# header and a marker around a few words would cost more than they tell.
LEAST_TEXT = 200
# A cut ends at a word boundary when there is one this close before the cut point.
WORD_REACH = 40


def marker(memory_id: str, full_chars: int) -> str:
    """The line that ends a cut memory: its id, its full size, and how to read it whole."""
    return (
        f"[… cut to fit the budget: {memory_id} is {full_chars:,} characters "
        f"({tokens_of(full_chars):,} tokens); `hippoctl inspect {memory_id}` shows it whole]"
    )


def cut_text(content: str, memory_id: str, keep: int) -> str:
    """The first `keep` characters of `content` (back to a word boundary when one is near), then the
    marker on its own line; the marker alone when `keep` is 0."""
    end = _word_end(content, keep)
    shown = content[:end].rstrip()
    tail = marker(memory_id, len(content))
    return f"{shown}\n{tail}" if shown else tail


def _word_end(content: str, keep: int) -> int:
    """Where a cut of `keep` characters ends: at the last space or newline within WORD_REACH before it."""
    if keep >= len(content) or keep <= 0 or content[keep].isspace():
        return max(0, keep)
    start = max(0, keep - WORD_REACH)
    space = max(content.rfind(" ", start, keep), content.rfind("\n", start, keep))
    return space if space > 0 else keep


def fit(content: str, memory_id: str, fits: Callable[[str], bool], *, least: int = LEAST_TEXT) -> str | None:
    """The longest cut of `content` that `fits` accepts, or None when even a cut showing `least`
    characters of it (or all of a shorter text) does not fit.

    `fits` must accept every shorter cut of a text it accepts: each surface's printed size grows
    with the text it is given.
    """
    low = min(least, len(content))
    if not fits(cut_text(content, memory_id, low)):
        return None
    # Largest keep in [low, len(content)) whose cut fits; the cut of the whole text is never asked
    # for (the caller cuts a memory only when it does not fit whole).
    high = len(content) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if fits(cut_text(content, memory_id, middle)):
            low = middle
        else:
            high = middle - 1
    return cut_text(content, memory_id, low)
