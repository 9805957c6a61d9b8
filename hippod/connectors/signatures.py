"""Webhook signatures, checked on the exact bytes received, before anything is parsed."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

SLACK_WINDOW_S = 300


def _hex_hmac(secret: str, message: bytes) -> str:
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def slack_valid(
    secrets: Sequence[str], timestamp: str | None, signature: str | None, body: bytes, now: float
) -> bool:
    """`X-Slack-Signature` = `v0=` + hex HMAC-SHA256(secret, `v0:<timestamp>:<body>`), with the
    timestamp within 5 minutes of now (a replayed delivery is refused)."""
    if not timestamp or not signature or not signature.startswith("v0=") or not timestamp.isdigit():
        return False
    if abs(now - int(timestamp)) > SLACK_WINDOW_S:
        return False
    base = b"v0:" + timestamp.encode() + b":" + body
    return any(hmac.compare_digest(signature, "v0=" + _hex_hmac(s, base)) for s in secrets if s)


def github_valid(secrets: Sequence[str], signature: str | None, body: bytes) -> bool:
    """`X-Hub-Signature-256` = `sha256=` + hex HMAC-SHA256(secret, body), compared in constant time."""
    if not signature or not signature.startswith("sha256="):
        return False
    return any(hmac.compare_digest(signature, "sha256=" + _hex_hmac(s, body)) for s in secrets if s)
