"""Finding and cutting a rejected value where it sits inside a longer text (a compaction summary),
matched the way digests match: after normalisation (hippod.model.digest.normalize)."""

from __future__ import annotations

import unicodedata

from hippod.model.digest import normalize

CUT_MARK = "[rejected]"


def _normalised_with_spans(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text normalised (without the trailing trim), and for each of its characters the span of
    the original text it came from.

    Normalising a base character together with the combining marks after it keeps NFKC's
    compositions; whitespace runs collapse to one space.
    """
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    start, end, size = 0, 0, len(text)
    space_before = True
    while start < size:
        end = start + 1
        while end < size and unicodedata.combining(text[end]):
            end += 1
        piece = "".join(c for c in text[start:end] if unicodedata.category(c) != "Cf")
        for char in unicodedata.normalize("NFKC", piece).lower():
            if char.isspace():
                if space_before:
                    continue
                char, space_before = " ", True
            else:
                space_before = False
            out.append(char)
            spans.append((start, end))
        start = end
    return "".join(out), spans


def _bounded(haystack: str, at: int, length: int) -> bool:
    """The match does not start or end inside a word."""
    before = haystack[at - 1] if at > 0 else " "
    after = haystack[at + length] if at + length < len(haystack) else " "
    return not before.isalnum() and not after.isalnum()


def holds(text: str, value: str) -> bool:
    """True when the text holds the value (any spelling that normalises the same) as a passage."""
    wanted = normalize(value)
    if not wanted or wanted not in normalize(text):
        return False
    haystack, _ = _normalised_with_spans(text)
    at = haystack.find(wanted)
    while wanted and at >= 0:
        if _bounded(haystack, at, len(wanted)):
            return True
        at = haystack.find(wanted, at + 1)
    return False


def cut(text: str, value: str) -> str | None:
    """The text with every passage holding the value replaced by CUT_MARK; None when the value
    cannot be cut out cleanly (the caller then drops the whole text)."""
    wanted = normalize(value)
    if not wanted or wanted not in normalize(text):
        return text
    haystack, spans = _normalised_with_spans(text)
    found: list[tuple[int, int]] = []
    at = haystack.find(wanted)
    while at >= 0:
        if _bounded(haystack, at, len(wanted)):
            found.append((spans[at][0], spans[at + len(wanted) - 1][1]))
            at = haystack.find(wanted, at + len(wanted))
        else:
            at = haystack.find(wanted, at + 1)
    result = text
    for start, end in reversed(found):
        result = result[:start] + CUT_MARK + result[end:]
    return None if holds(result, value) else result
