"""Checks on request fields that client and daemon share: the client runs them before connecting
(usage errors exit 2 without a daemon), the daemon runs them again on whatever reaches it.

Each function returns None when the value is fine, else a one-line message naming the problem.
"""

from __future__ import annotations

import re

MIN_CONTENT_CHARS = 3
# Row ids are SQLite's signed 64-bit integers, counted from 1.
MAX_ID = 2**63 - 1
MAX_CONTENT_BYTES = 1024 * 1024
CONFIDENCE_TIERS = ("verified", "observed", "inferred")
# Han, Hiragana, Katakana and Hangul: scripts written without spaces between words.
CJK_RANGES = (
    "\u1100-\u11ff\u3040-\u309f\u30a0-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
)
_OWNER = re.compile(r"^(user|agent):\S{1,128}$")
_URI = re.compile(r"^[a-z][a-z0-9+.-]*:")
# The tokenizer keeps word runs of two or more characters, and lone CJK characters.
_SEARCH_TERM = re.compile(f"\\w\\w|[{CJK_RANGES}]")


def content_problem(text: str) -> str | None:
    """For memory text already trimmed: at least 3 characters, at most 1 MiB of UTF-8."""
    if len(text) < MIN_CONTENT_CHARS:
        return f"memory text must be at least {MIN_CONTENT_CHARS} characters after trimming"
    try:
        size = len(text.encode())
    except UnicodeEncodeError:
        return "memory text is not valid UTF-8"
    if size > MAX_CONTENT_BYTES:
        return f"memory text is {size} bytes; the limit is 1 MiB ({MAX_CONTENT_BYTES} bytes)"
    return None


def owner_problem(owner: str | None) -> str | None:
    if owner is not None and not _OWNER.match(owner):
        return "--owner must look like user:<id> or agent:<id>"
    return None


def artifact_ref_problem(ref: str | None) -> str | None:
    if ref is not None and not _URI.match(ref):
        return "--artifact-ref must be a URI with a scheme, e.g. file:///path"
    return None


def id_problem(value: int, what: str) -> str | None:
    """A row number (a conflict's, a decision's, a handoff's) is between 1 and SQLite's largest id."""
    if not 1 <= value <= MAX_ID:
        return f"{what} must be between 1 and {MAX_ID}, not {value}"
    return None


def query_problem(query: str) -> str | None:
    """A query needs at least one searchable word."""
    if not _SEARCH_TERM.search(query):
        return "the query has no searchable words"
    return None
