"""Lessons from commit subjects, and what a migration commit makes out of date (ingest.md §5 steps
3, 4 and 7). Pure functions."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

MIN_LESSON_CHARS = 6
MAX_LESSON_CHARS = 499
MAX_TARGET_WORDS = 5

_HASH = re.compile(r"^[0-9a-f]{7,40} ", re.IGNORECASE)
_TYPE_PREFIX = re.compile(r"^\s*[\w-]+(\([^)]*\))?!?:\s*")
_PAST_TENSE = re.compile(
    r"\b(fixed|reverted|corrected|resolved|refactored|optimized|deprecated)\b.{3,100}", re.IGNORECASE
)
_TARGETS: list[tuple[str, re.Pattern[str]]] = [
    (
        "migration",
        re.compile(r"\b(?:migrat|switch|mov|convert|transition|upgrad)\w*\s+(?:from\s+)?(.+?)\s+to\s+", re.I),
    ),
    ("migration", re.compile(r"\bfrom\s+(.+?)\s+to\s+", re.I)),
    ("migration", re.compile(r"\breplac\w*\s+(.+?)\s+with\s+", re.I)),
    ("deprecation", re.compile(r"\bdeprecat\w*\s+(.+)", re.I)),
    ("removal", re.compile(r"\b(?:remov|drop)\w*\s+(.+)", re.I)),
]
# Removing "unused imports" or "dead code" makes nothing out of date.
_TIDY_WORDS = frozenset("extra unused empty old whitespace spaces blank dead commented".split())
_CUT = re.compile(r",|;| \(")
_QUOTES = "\"'`"
_TRAILING = ".,;:!? \t"


@dataclass(frozen=True, slots=True)
class Target:
    """What a commit moved away from: `invalidate` is run for `text`."""

    kind: str  # migration, deprecation or removal
    text: str


@dataclass(frozen=True, slots=True)
class Lesson:
    """One lesson from a subject: its text, its rule, and the target it names (if any)."""

    text: str
    rule: str  # "prefix" (a), "keyword" (b) or "migration" (c)
    target: Target | None


def strip_hash(subject: str) -> str:
    """A leading 7-40 character hex hash and its space removed (as in `git log --oneline`)."""
    return _HASH.sub("", subject, count=1)


def without_type(text: str) -> str:
    """The text minus a leading conventional-commit `type(scope)!:` prefix."""
    return _TYPE_PREFIX.sub("", text, count=1)


def _clean_target(raw: str) -> str:
    text = _CUT.split(raw, maxsplit=1)[0]
    text = "".join(c for c in text if c not in _QUOTES)
    words = text.rstrip(_TRAILING).split()[:MAX_TARGET_WORDS]
    return " ".join(words).rstrip(_TRAILING)


def target_of(lesson: str) -> Target | None:
    """The thing a lesson says was migrated from, deprecated or removed, cleaned up; first rule wins."""
    text = without_type(lesson)
    for kind, pattern in _TARGETS:
        match = pattern.search(text)
        if not match:
            continue
        target = _clean_target(match.group(1))
        if not target:
            return None
        if kind == "removal":
            words = target.lower().split()
            if len(words) <= 2 and _TIDY_WORDS.intersection(words):
                return None
        return Target(kind, target)
    return None


def prefix_pattern(patterns: Sequence[str]) -> re.Pattern[str]:
    """Rule (a): `^(P)(\\([^)]*\\))?!?:?\\s+(.+)` with P the store's `gitLearnPatterns`."""
    alternatives = "|".join(re.escape(p) for p in patterns if p.strip()) or r"(?!)"
    return re.compile(rf"^({alternatives})(\([^)]*\))?!?:?\s+(.+)", re.IGNORECASE)


def lesson_of(subject: str, prefix: re.Pattern[str]) -> Lesson | None:
    """The lesson in one commit subject (hash already stripped), or None; the first rule that
    applies wins, and the lesson must be 6-499 chars."""
    subject = subject.strip()
    text: str | None = None
    rule = ""
    match = prefix.match(subject)
    if match:
        text, rule = match.group(3), "prefix"
    else:
        keyword = _PAST_TENSE.search(subject)
        if keyword:
            text, rule = keyword.group(0), "keyword"
        elif target_of(subject) is not None:
            text, rule = without_type(subject), "migration"
    if text is None:
        return None
    text = text.strip()
    if not MIN_LESSON_CHARS <= len(text) <= MAX_LESSON_CHARS:
        return None
    return Lesson(text, rule, target_of(text))


def lessons(subjects: Sequence[str], patterns: Sequence[str]) -> tuple[list[Lesson], int]:
    """Each distinct lesson in order, and how many repeated an earlier one of the same run."""
    prefix = prefix_pattern(patterns)
    found: list[Lesson] = []
    seen: set[str] = set()
    repeats = 0
    for subject in subjects:
        lesson = lesson_of(strip_hash(subject), prefix)
        if lesson is None:
            continue
        key = " ".join(lesson.text.lower().split())
        if key in seen:
            repeats += 1
            continue
        seen.add(key)
        found.append(lesson)
    return found, repeats
