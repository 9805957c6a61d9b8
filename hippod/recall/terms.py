"""Index terms: the tokenizer's tokens, stemmed, as the FTS index and BM25 see them.

`tokenize` (recall.md §3) stays the baseline tokenizer; this layer folds inflections
("deployments", "deployed" -> "deploy") so that a query finds a memory written with another
form of the same word. CJK bigrams and tokens with digits or underscores pass unchanged.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import snowballstemmer

from hippod.recall.tokenize import tokenize

# Bump when the mapping from text to terms changes: stores re-index their FTS columns on open.
TERMS_VERSION = 1

_STEMMER = snowballstemmer.stemmer("english")
_PLAIN_WORD = re.compile(r"[^\W\d_]+")


@functools.lru_cache(maxsize=1 << 16)
def stem(token: str) -> str:
    """The stem of one token; tokens that are not plain words (digits, _, CJK) stay as they are."""
    if not token.isascii() or not _PLAIN_WORD.fullmatch(token):
        return token
    stemmed: str = _STEMMER.stemWord(token)
    return stemmed if len(stemmed) > 1 else token


def terms(text: str) -> list[str]:
    """The index terms of a text, in order, repeats kept."""
    return [stem(token) for token in tokenize(text)]


def fts_columns(content: str, tags: Sequence[str]) -> tuple[str, str]:
    """The index terms of content and tags, space-separated, as the FTS index and BM25 read them."""
    return " ".join(terms(content)), " ".join(terms(" ".join(tags)))
