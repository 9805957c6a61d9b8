"""The secret detector (ingest.md §4 "Secret detector families"), shared by decay and auto-share.

Provisional home: the ingest work owns scrubbing; this module only answers "does it look secret?".
"""

from __future__ import annotations

import re

SECRET_TAGS = frozenset(
    {"secret", "api-key", "apikey", "credential", "credentials", "token", "password", "private-key"}
)

_ALWAYS = [
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36}\b"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\b(sk|rk)_(live|test)_[A-Za-z0-9]{16,}"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"authorization\s*:\s*(bearer|basic|token)\s+\S{8,}", re.IGNORECASE),
    re.compile(r"\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}"),
]
# `sk-...` style keys count only when the text also talks about keys or credentials.
_KEYLIKE = [re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"), re.compile(r"\bsk_[a-z]+_[A-Za-z0-9]{16,}")]
_KEY_WORDS = re.compile(r"key|token|secret|credential|bearer|auth|password", re.IGNORECASE)
_ASSIGNMENT = re.compile(r"(api[_-]?key|secret|token|passw(or)?d|pwd)\s*[:=]\s*[\"']?([^\s\"']{12,})", re.I)


def looks_secret(content: str, tags: list[str] | tuple[str, ...] = ()) -> bool:
    """True when the text or tags match any secret family; such rows are deleted, never kept dormant."""
    if SECRET_TAGS.intersection(t.lower() for t in tags):
        return True
    if any(p.search(content) for p in _ALWAYS):
        return True
    if any(p.search(content) for p in _KEYLIKE) and _KEY_WORDS.search(content):
        return True
    return any(any(c.isdigit() for c in m.group(3)) for m in _ASSIGNMENT.finditer(content))
