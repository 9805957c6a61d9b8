"""Conflict rules (sleep.md §7): which two memories contradict each other, and why. Pure functions."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from hippod.lifecycle.simjoin import SetIndex, jaccard

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
    found: list[Detected] = []
    for tenant, items in by_tenant.items():
        tokens = [distinctive_tokens(i.content) for i in items]
        windows = [window(i.content) for i in items]
        sides = [_sides(w) for w in windows]
        # A rule needs a P phrase on one side and an N phrase on the other, so P-side texts are
        # looked up among N-side ones and back; texts with neither never take part.
        keep = [k for k, t in enumerate(tokens) if len(t) >= MIN_SHARED_TOKENS and any(sides[k])]
        positives = SetIndex([tokens[k] for k in keep], MIN_JACCARD)
        negatives = positives.sibling()
        fresh_positives, fresh_negatives = positives.sibling(), positives.sibling()
        for pos, k in enumerate(keep):
            is_p, is_n = sides[k]
            old = items[k].id in settled
            others = set((fresh_negatives if old else negatives).matches(pos)) if is_p else set()
            if is_n:
                others.update((fresh_positives if old else positives).matches(pos))
            for other_pos in sorted(others):
                o = keep[other_pos]
                if items[k].trace and items[o].trace:
                    continue
                hit = pair_conflict(tokens[k], windows[k], tokens[o], windows[o])
                if hit is not None:
                    a, b = sorted((items[k].id, items[o].id))
                    found.append(Detected(a, b, tenant, hit[0], hit[1]))
            if is_p:
                positives.add(pos)
                if not old:
                    fresh_positives.add(pos)
            if is_n:
                negatives.add(pos)
                if not old:
                    fresh_negatives.add(pos)
        found += _confirm(items, tokens, windows, settled, known, tenant)
    found = list({(d.a, d.b): d for d in found}.values())
    found.sort(key=lambda d: (d.a, d.b))
    return found


def _confirm(
    items: Sequence[ConflictInput],
    tokens: Sequence[frozenset[str]],
    windows: Sequence[str],
    settled: AbstractSet[str],
    known: Iterable[tuple[str, str]],
    tenant: str,
) -> list[Detected]:
    """Known pairs of two settled memories that still conflict (the walk skips such pairs)."""
    where = {item.id: k for k, item in enumerate(items)}
    found = []
    for a, b in known:
        i, j = where.get(a), where.get(b)
        if i is None or j is None or a not in settled or b not in settled:
            continue
        if items[i].trace and items[j].trace:
            continue
        hit = pair_conflict(tokens[i], windows[i], tokens[j], windows[j])
        if hit is not None:
            x, y = sorted((a, b))
            found.append(Detected(x, y, tenant, hit[0], hit[1]))
    return found
