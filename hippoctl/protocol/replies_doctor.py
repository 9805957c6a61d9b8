"""Replies of `doctor` and `support-bundle` (integrations.md §12)."""

from __future__ import annotations

import msgspec


class Check(msgspec.Struct, omit_defaults=True):
    """One doctor check: status is ok, warn or fail; fix is the command that mends a problem."""

    name: str
    status: str
    message: str
    fix: str | None = None
