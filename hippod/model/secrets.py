"""The secret detector and scrubber (ingest.md §4 "Secret detector families").

Shared by decay, auto-share, context isolation, imports of agent notes, capture, `watch`,
`capture-error` and compaction: `looks_secret` answers "should this never be stored?", and `scrub`
replaces each match with `[REDACTED:<family>]` for text that is kept.
"""

from __future__ import annotations

import re

SECRET_TAGS = frozenset(
    {"secret", "api-key", "apikey", "credential", "credentials", "token", "password", "private-key"}
)

# (family, pattern) pairs that flag a text on their own.
_ALWAYS: list[tuple[str, re.Pattern[str]]] = [
    ("aws", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
    ("github", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36}\b")),
    ("github", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}")),
    ("slack", re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}")),
    ("stripe", re.compile(r"\b(sk|rk)_(live|test)_[A-Za-z0-9]{16,}")),
    ("google", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("pem", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("auth-header", re.compile(r"authorization\s*:\s*(bearer|basic|token)\s+\S{8,}", re.IGNORECASE)),
    ("jwt", re.compile(r"\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}")),
]
# `sk-...` style keys count only when the text also talks about keys or credentials.
_KEYLIKE = [re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"), re.compile(r"\bsk_[a-z]+_[A-Za-z0-9]{16,}")]
_KEY_WORDS = re.compile(r"key|token|secret|credential|bearer|auth|password", re.IGNORECASE)
_ASSIGNMENT = re.compile(r"(api[_-]?key|secret|token|passw(or)?d|pwd)\s*[:=]\s*[\"']?([^\s\"']{12,})", re.I)


def looks_secret(content: str, tags: list[str] | tuple[str, ...] = ()) -> bool:
    """True when the text or tags match any secret family; such rows are deleted, never kept dormant."""
    if SECRET_TAGS.intersection(t.lower() for t in tags):
        return True
    if any(p.search(content) for _, p in _ALWAYS):
        return True
    if any(p.search(content) for p in _KEYLIKE) and _KEY_WORDS.search(content):
        return True
    return any(_has_digit(m.group(3)) for m in _ASSIGNMENT.finditer(content))


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


def scrub(content: str) -> str:
    """The text with every secret match replaced by `[REDACTED:<family>]`."""
    for family, pattern in _ALWAYS:
        content = pattern.sub(f"[REDACTED:{family}]", content)
    if _KEY_WORDS.search(content):
        for pattern in _KEYLIKE:
            content = pattern.sub("[REDACTED:api-key]", content)

    def assignment(match: re.Match[str]) -> str:
        value = match.group(3)
        if not _has_digit(value):
            return match.group(0)
        return match.group(0)[: match.start(3) - match.start(0)] + "[REDACTED:assignment]"

    return _ASSIGNMENT.sub(assignment, content)
