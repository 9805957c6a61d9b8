"""Conflict rules (sleep.md §7): which two memories contradict each other, and why. Pure functions."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from hippod.model.simjoin import jaccard
from hippod.model.wordsets import TokenColumn, pairs

STOPWORDS = frozenset(
    """the and but for nor yet are was were been being has have had having does did doing with without
    from into onto upon about above below after before again further then once here there when where
    what which who whom whose why how all any both each few more most less other some such only own
    same than too very can will just should would could may might shall this that these those them they
    their theirs its our ours your yours his her hers she him you also because while during through
    between under over out via per etc one two three new old get got let lets""".split()
)
MIN_SHARED_TOKENS = 2
MIN_JACCARD = 0.5
MIN_STRENGTH = 0.05  # a candidate's least strength
WINDOW_WORDS = 40

_NON_WORD_ASCII = re.compile(r"[^A-Za-z0-9_]")
_NON_WINDOW = re.compile(r"[^a-z0-9']")
_MUST_NOT_NOT = re.compile(r" must (?!not )")

NEGATIVE = (
    " not ", " never ", " no ", " don't ", " do not ", " doesn't ", " does not ", " can't ", " cannot ",
    " shouldn't ", " should not ", " disabled ", " disable ", " off ", " false ", " missing ", " broken ",
    " failed ",
)  # fmt: skip
POSITIVE = (
    " enabled ", " enable ", " works ", " working ", " true ", " available ", " present ", " on ",
    " always ", " must ",
)  # fmt: skip

REASON_ENABLED = "enabled/disabled mismatch on overlapping statement"
REASON_TRUE = "true/false mismatch on overlapping statement"
REASON_ALWAYS = "always/never mismatch on overlapping statement"
REASON_POLARITY = "negation polarity mismatch on overlapping statement"


def distinctive_tokens(content: str) -> frozenset[str]:
    """Lowercased ASCII word tokens longer than 2 chars, minus the stopwords (tags never count)."""
    words = _NON_WORD_ASCII.sub(" ", content.lower()).split()
    return frozenset(w for w in words if len(w) > 2 and w not in STOPWORDS)


def window(content: str) -> str:
    """The first 40 words, lowercased, non-[a-z0-9'] as spaces, collapsed, padded with one space."""
    text = " ".join(content.split()[:WINDOW_WORDS]).lower()
    return " " + " ".join(_NON_WINDOW.sub(" ", text).split()) + " "


def _has(text: str, phrases: Sequence[str]) -> bool:
    return any(p in text for p in phrases)


def polarity(text: str) -> int:
    """-1 negative, +1 positive, 0 neutral, for a window text."""
    if _has(text, NEGATIVE):
        return -1
    if _has(text, POSITIVE):
        return 1
    return 0


def _always(text: str) -> bool:
    return " always " in text or _MUST_NOT_NOT.search(text) is not None


def _never(text: str) -> bool:
    return " never " in text or " must not " in text


def _enabled(text: str) -> bool:
    return _has(text, (" enabled ", " enable "))


def _disabled(text: str) -> bool:
    return _has(text, (" disabled ", " disable "))


def _true(text: str) -> bool:
    return _has(text, (" true ", " yes "))


def _false(text: str) -> bool:
    return _has(text, (" false ", " no "))


def _positive(text: str) -> bool:
    return polarity(text) > 0


def _negative(text: str) -> bool:
    return polarity(text) < 0


# (P, N, reason) in the order the rules are tried.
_RULES: tuple[tuple[Callable[[str], bool], Callable[[str], bool], str], ...] = (
    (_enabled, _disabled, REASON_ENABLED),
    (_true, _false, REASON_TRUE),
    (_always, _never, REASON_ALWAYS),
    (_positive, _negative, REASON_POLARITY),
)


def _sides(text: str) -> tuple[bool, bool]:
    """(has some P phrase, has some N phrase) of any rule, for a window text."""
    return any(p(text) for p, _, _ in _RULES), any(n(text) for _, n, _ in _RULES)


def rule_reason(window_a: str, window_b: str) -> str | None:
    """The first §7 rule that fires for two window texts, or None."""
    for positive, negative, reason in _RULES:
        if (positive(window_a) and negative(window_b)) or (positive(window_b) and negative(window_a)):
            return reason
    return None


def pair_conflict(
    tokens_a: frozenset[str], window_a: str, tokens_b: frozenset[str], window_b: str
) -> tuple[str, float] | None:
    """(reason, score) when two memories contradict each other, else None."""
    shared = len(tokens_a & tokens_b)
    if shared < MIN_SHARED_TOKENS:
        return None
    score = jaccard(tokens_a, tokens_b)
    if score < MIN_JACCARD:
        return None
    reason = rule_reason(window_a, window_b)
    return None if reason is None else (reason, score)


def conflict_between(content_a: str, content_b: str) -> tuple[str, float] | None:
    """pair_conflict on two texts (used by dedupe, which never deletes one side of a contradiction)."""
    return pair_conflict(
        distinctive_tokens(content_a), window(content_a), distinctive_tokens(content_b), window(content_b)
    )


@dataclass(frozen=True, slots=True)
class ConflictInput:
    """A conflict candidate: id, tenant, text, and whether it is a trace (two traces never conflict)."""

    id: str
    tenant: str
    content: str
    trace: bool


@dataclass(frozen=True, slots=True)
class Detected:
    a: str  # a < b by string order
    b: str
    tenant: str
    reason: str
    score: float


def judge(a: ConflictInput, b: ConflictInput) -> Detected | None:
    """The conflict between two candidates of one tenant, if any (two traces never conflict)."""
    if a.trace and b.trace:
        return None
    hit = conflict_between(a.content, b.content)
    if hit is None:
        return None
    x, y = sorted((a.id, b.id))
    return Detected(x, y, a.tenant, hit[0], hit[1])


def sides(content: str) -> tuple[bool, bool]:
    """(has some P phrase, has some N phrase) of any rule, for a memory's text."""
    return _sides(window(content))


def takes_part(tokens: AbstractSet[str], has: tuple[bool, bool]) -> bool:
    """Whether a memory can be one side of a conflict at all: a rule needs a P phrase on one side
    and an N phrase on the other, and the pair needs 2 shared distinctive tokens."""
    return len(tokens) >= MIN_SHARED_TOKENS and any(has)


def opposed_pairs(
    column: TokenColumn,
    rows: Iterable[int],
    positive: Sequence[bool],
    negative: Sequence[bool],
    fresh: Sequence[bool],
) -> list[tuple[int, int]]:
    """Pairs of the numbered rows with Jaccard >= 0.5 on their distinctive tokens, one with a P
    phrase and the other an N phrase, and at least one fresh (see `detect`)."""
    return [
        (i, j)
        for i, j in pairs(column, rows, MIN_JACCARD, probe=fresh)
        if (positive[i] and negative[j]) or (negative[i] and positive[j])
    ]


def detect(
    candidates: Sequence[ConflictInput],
    settled: AbstractSet[str] = frozenset(),
    known: Iterable[tuple[str, str]] = (),
) -> list[Detected]:
    """Every conflicting pair within one tenant, ordered by (a, b).

    `settled` are ids not changed since the previous sleep, which compared them with each other: a
    pair of two of them is looked at again only when it is `known` (a stored conflict, which must be
    confirmed or else auto-resolved), so a daily sleep costs what changed since the last one.
    """
    by_tenant: dict[str, list[ConflictInput]] = {}
    for item in candidates:
        by_tenant.setdefault(item.tenant, []).append(item)
    known = list(known)
    found: list[Detected] = []
    for items in by_tenant.values():
        tokens = [distinctive_tokens(i.content) for i in items]
        has = [sides(i.content) for i in items]
        column = TokenColumn().extend(tokens)
        keep = [k for k, t in enumerate(tokens) if takes_part(t, has[k])]
        fresh = [i.id not in settled for i in items]
        positive, negative = [p for p, _ in has], [n for _, n in has]
        found_pairs = opposed_pairs(column, keep, positive, negative, fresh)
        judged = [judge(items[i], items[j]) for i, j in found_pairs]
        judged += confirm({i.id: i for i in items}, settled, known)
        found += [d for d in judged if d is not None]
    found = list({(d.a, d.b): d for d in found}.values())
    found.sort(key=lambda d: (d.a, d.b))
    return found


def confirm(
    items: Mapping[str, ConflictInput], settled: AbstractSet[str], known: Iterable[tuple[str, str]]
) -> list[Detected | None]:
    """Known pairs of two settled candidates, judged again (the pairs `detect` skips)."""
    return [
        judge(items[a], items[b])
        for a, b in known
        if a in items and b in items and a in settled and b in settled
    ]
