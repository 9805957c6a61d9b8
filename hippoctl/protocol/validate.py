"""Checks on request fields that client and daemon share: the client runs them before connecting
(usage errors exit 2 without a daemon), the daemon runs them again on whatever reaches it.

Each function returns None when the value is fine, else a one-line message naming the problem.
"""

from __future__ import annotations

import math
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
# The tokenizer keeps word runs of two or more characters, and lone CJK characters. Compiled on first
# use: the character class costs the client ~1.5 ms to compile, and hooks that send no query never
# need it.
_SEARCH_TERM = f"\\w\\w|[{CJK_RANGES}]"


RERANKERS = ("off", "local", "cohere", "voyage")
_RERANKER = re.compile(r"^(off|local|cohere(:\S+)?|voyage(:\S+)?)$")


def reranker_problem(spec: str) -> str | None:
    """`--reranker` is off, local, or an API with an optional model: cohere[:model], voyage[:model]."""
    if not _RERANKER.match(spec):
        return f"--reranker {spec!r}: use off, local, cohere[:model] or voyage[:model]"
    return None


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


def memory_id_problem(value: str | None, what: str = "the memory id") -> str | None:
    """A memory's id, when one is given, is not empty: an empty one would name no memory at all."""
    if value is not None and not value.strip():
        return f"{what} is empty"
    return None


def query_problem(query: str) -> str | None:
    """A query needs at least one searchable word."""
    if not re.search(_SEARCH_TERM, query):
        return "the query has no searchable words"
    return None


# recall --hops: how far the entity graph is walked at most (recall.md §11).
MAX_HOPS = 3


def number_problem(
    name: str, value: float, low: float, high: float | None = None, *, above: bool = False
) -> str | None:
    """One rule for every numeric option, client and daemon alike: a finite number from `low`
    (more than `low` with `above`) to `high`. `context --budget 0` is allowed; a negative one is not."""
    bound = f"between {low:g} and {high:g}" if high is not None else f"{low:g} or more"
    if above:
        bound = f"more than {low:g}"
    fits = math.isfinite(value) and (value > low if above else value >= low)
    if not fits or (high is not None and value > high):
        return f"{name} must be {bound}"
    return None


def utf8_problem(data: bytes, what: str) -> str | None:
    """Bytes that are not UTF-8, named by the first bad byte: stdin is refused as an argument is."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"{what} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
    return None


# The largest page a listing request may ask for, which the verbs and the HTTP API both hold to.
AUDIT_PAGE_MAX = 10_000
API_KEY_PAGE_MAX = 1000
TEAM_FEED_PAGE_MAX = 1000


# Tags are labels (`error`, `deploy`, `path:etl`): recall matches them as words and sleep compares
# them pairwise, so an unbounded list costs seconds per memory. The caps leave room for every real
# use: the daemon adds at most 6 of its own (error, scope:<s>, 4 path tags) besides these.
MAX_TAGS = 32
MAX_TAG_CHARS = 64


def clean_tags(tags: list[str]) -> list[str]:
    """Given tags trimmed, the empty ones dropped and the repeats merged, in their order."""
    return list(dict.fromkeys(t.strip() for t in tags if t.strip()))


def tag_count_problem(count: int) -> str | None:
    return f"too many tags: {count}; the limit is {MAX_TAGS}" if count > MAX_TAGS else None


def tags_problem(tags: list[str]) -> str | None:
    """For cleaned tags: at most MAX_TAGS, each at most MAX_TAG_CHARS characters."""
    if len(tags) > MAX_TAGS:
        return tag_count_problem(len(tags))
    for tag in tags:
        if len(tag) > MAX_TAG_CHARS:
            shown = tag[:20] + "…"
            return f"tag {shown!r} is {len(tag)} characters long; the limit is {MAX_TAG_CHARS}"
    return None


def goal_problem(tag: str) -> str | None:
    """For a trimmed goal tag (`goal push`, `recall --goal`): a tag a memory can carry, one line long."""
    if not tag:
        return "the goal tag is empty"
    if len(tag) > MAX_TAG_CHARS:
        return f"the goal tag is {len(tag)} characters long; the limit is {MAX_TAG_CHARS}"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in tag):
        return "the goal tag holds a control character"
    return None
