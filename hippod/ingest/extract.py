"""Heuristic extraction of decisions, rules, errors, preferences and spec items from conversation
text (ingest.md §3, steps 1-4 up to the store check). Pure functions; no model is used."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hippod.model.dedupe import junk_reason, junk_warning

MIN_ITEM_CHARS = 8
MAX_ITEM_CHARS = 500
CATEGORIES = ("spec", "decision", "rule", "error", "preference")

_SPEC_OPEN = re.compile(
    r"^\s*(#{1,6}\s*)?(features?|requirements|specs?|specifications|plan|design|architecture|interface"
    r"|api|todo|tasks|implementation|notes)\s*:?\s*$",
    re.IGNORECASE,
)
# A heading closes a spec section. Not case-insensitive: "Title Case:" lines are headings, while a
# lowercase "note:" line is just text.
_SPEC_CLOSE = re.compile(r"^#{1,6}\s|^[A-Z][\w ]{0,40}:\s*$")
_BULLET = re.compile(r"^\s*(?:[-*]|\d+\.)\s+(.*)$")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n")


def _patterns(*sources: str) -> list[re.Pattern[str]]:
    return [re.compile(s, re.IGNORECASE) for s in sources]


# (category, patterns), tried top to bottom; the first pattern that matches wins. Where the group
# includes the leading keyword (never, always, avoid, prefer...), the item keeps its polarity.
PATTERNS: list[tuple[str, list[re.Pattern[str]]]] = [
    (
        "decision",
        _patterns(
            r"\b(?:we(?:'ve| have)?|i(?:'ve| have)?|let's)\s+decid(?:ed|e)\s+(?:to\s+)?(.{10,200})",
            r"\b(?:let's|we(?:'ll| will| should)?)\s+"
            r"(?:go with|do|use|try|build|implement|switch to)\s+(.{5,200})",
            r"\b(?:going|went) with\s+(.{5,200})",
            r"\b(?:the plan is|plan:)\s*(.{10,200})",
            r"\bdecision:\s*(.{10,200})",
        ),
    ),
    (
        "rule",
        _patterns(
            r"\b((?:never|always|must(?: not)?|don't ever|do not ever)\s+.{5,200})",
            r"\b(?:the rule is|rule:)\s*(.{5,200})",
            r"\b(?:important|critical|remember):\s*(.{10,200})",
            r"\b(?:make sure|ensure)\s+(?:to\s+)?(.{10,200})",
        ),
    ),
    (
        "error",
        _patterns(
            r"\b(?:error|bug|gotcha|watch out|careful|warning|caveat|trap):\s*(.{10,200})",
            r"\b((?:this broke|this breaks|this will break|broke because)\s+.{5,200})",
            r"\bthe (?:issue|problem|fix) (?:is|was)\s+(.{10,200})",
            r"\b(?:don't forget|easy to miss):\s*(.{5,200})",
        ),
    ),
    (
        "preference",
        _patterns(
            r"\b((?:prefer|use)\s+.{5,100}?\s+(?:instead of|over|not)\s+.{3,100})",
            r"\b((?:don't use|avoid|skip)\s+.{5,200})",
            r"\b((?:we're using|we are using|the stack is|we use)\s+.{5,200})",
        ),
    ),
]

_LEADING = ": -\t–—"
_TRAILING = ".,;:!? \t"
_NON_WORD = re.compile(r"[^\w\s]")


@dataclass(frozen=True, slots=True)
class Item:
    """One extracted item: its category and the cleaned text to store."""

    category: str
    text: str


def spec_items(text: str) -> list[str]:
    """Bullets inside spec sections: an opening line (`Features:`, `## Plan`...) up to the next heading."""
    found: list[str] = []
    inside = False
    for line in text.splitlines():
        if _SPEC_OPEN.match(line):
            inside = True
            continue
        if _SPEC_CLOSE.match(line):
            inside = False
            continue
        if inside:
            bullet = _BULLET.match(line)
            if bullet:
                found.append(bullet.group(1))
    return found


def sentences(text: str) -> list[str]:
    """Pieces split at sentence ends and newlines, longer than 5 characters."""
    return [piece for piece in _SENTENCE_SPLIT.split(text) if len(piece.strip()) > 5]


def classify(sentence: str) -> Item | None:
    """The first category pattern that matches the sentence, as an uncleaned item."""
    for category, patterns in PATTERNS:
        for pattern in patterns:
            match = pattern.search(sentence)
            if match:
                return Item(category, match.group(1))
    return None


def clean(text: str) -> str:
    """Leading `:`, spaces and dashes and trailing `. , ; : ! ?` removed."""
    return text.strip().lstrip(_LEADING).rstrip(_TRAILING).strip()


def worthy(text: str) -> bool:
    """8-500 chars and passes the worthiness check of sleep.md §6 (junk and weak-row rules)."""
    if not MIN_ITEM_CHARS <= len(text) <= MAX_ITEM_CHARS:
        return False
    return junk_reason(text) is None and junk_warning(text) is None


def batch_key(text: str) -> str:
    """Within one capture, items equal after lowercasing and collapsing whitespace are one."""
    return " ".join(text.lower().split())


def store_key(text: str) -> str:
    """Against the store, an item is known when this key equals a memory's: lowercase, non-word
    characters removed, spaces collapsed."""
    return " ".join(_NON_WORD.sub("", text.lower()).split())


def extract(text: str) -> list[Item]:
    """Spec items first, then one item per matching sentence; cleaned, checked and de-duplicated.

    A repeat within the batch is dropped silently: a spec bullet that also reads as a rule is one
    item, not a duplicate the user should hear about.
    """
    raw = [Item("spec", bullet) for bullet in spec_items(text)]
    for sentence in sentences(text):
        item = classify(sentence)
        if item is not None:
            raw.append(item)
    items: list[Item] = []
    seen: set[str] = set()
    for item in raw:
        cleaned = clean(item.text)
        if not worthy(cleaned):
            continue
        key = batch_key(cleaned)
        if key in seen:
            continue
        seen.add(key)
        items.append(Item(item.category, cleaned))
    return items
