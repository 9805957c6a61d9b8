"""The tokenizer shared by BM25, the FTS index, overlap tests and dormant search (recall.md §3)."""

from __future__ import annotations

import re

from hippoctl.protocol.validate import CJK_RANGES

_NON_WORD = re.compile(r"[^\w\s]")
_CJK = CJK_RANGES
_CJK_SPLIT = re.compile(f"([{_CJK}]+)")
_HAS_CJK = re.compile(f"[{_CJK}]")


def tokenize(text: str) -> list[str]:
    """Lowercase, drop punctuation, split on spaces, keep tokens longer than one character.

    Runs of CJK characters become overlapping bigrams; a lone CJK character stays a token.
    Duplicates are kept, in order.
    """
    pieces = _NON_WORD.sub(" ", text.lower()).split()
    if not _HAS_CJK.search(text):
        # Most texts have no CJK at all: one search over the text instead of one per word.
        return [piece for piece in pieces if len(piece) > 1]
    tokens: list[str] = []
    for piece in pieces:
        if not _HAS_CJK.search(piece):
            if len(piece) > 1:
                tokens.append(piece)
            continue
        for part in _CJK_SPLIT.split(piece):
            if not part:
                continue
            if _HAS_CJK.match(part):
                if len(part) == 1:
                    tokens.append(part)
                else:
                    tokens.extend(part[i : i + 2] for i in range(len(part) - 1))
            elif len(part) > 1:
                tokens.append(part)
    return tokens


def text_overlap(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' token sets; two empty texts overlap fully."""
    sa, sb = set(tokenize(a)), set(tokenize(b))
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def fts_match_expression(tokens: list[str]) -> str:
    """An FTS5 MATCH string that ORs the distinct tokens, each quoted so user text is never syntax."""
    distinct = list(dict.fromkeys(tokens))
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in distinct)
