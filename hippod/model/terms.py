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

from hippod.base import heap
from hippod.model.tokenize import tokenize

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


# A large import or sleep leaves an entry here for every new word it met (base/heap.py).
heap.empty_after_work(stem.cache_clear)


# English function words, left out of queries (never out of the index): they match most memories, so
# they pull in candidates for no reason and make FTS rank many more rows. A query made only of them
# keeps them all.
QUERY_STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can did do does doing down during each few for from further had has have having he
    her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
    # What the tokenizer leaves of contractions ("I've" -> "ve", "didn't" -> "didn"); "won" stays, a
    # word in its own right.
    + """ll re ve ain aren couldn didn doesn don hadn hasn haven isn mightn mustn needn shan shouldn wasn
    weren wouldn""".split()
)


def query_terms(text: str) -> list[str]:
    """The terms a query searches with: its words less the English function words, stemmed."""
    tokens = tokenize(text)
    kept = [token for token in tokens if token not in QUERY_STOPWORDS] or tokens
    return [stem(token) for token in kept]


def terms(text: str) -> list[str]:
    """The index terms of a text, in order, repeats kept."""
    return [stem(token) for token in tokenize(text)]


def fts_columns(content: str, tags: Sequence[str]) -> tuple[str, str]:
    """The index terms of content and tags, space-separated, as the FTS index and BM25 read them."""
    return " ".join(terms(content)), " ".join(terms(" ".join(tags)))
