"""One error shape for every HTTP failure, and the status each of hippod's error codes answers.

The shape is `{"error": "<message>", "code": "<code>"}` (plus `hint` when there is one): the
original's SDK raises `HippoError(status, body["error"])`, so the message must be the string under
`error`; the code rides beside it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from hippoctl.protocol import errors as codes
from hippod.base.errors import HippoError
from hippod.store.sqlite import sqlite_errors

# hippod's error codes (HippoError.code) and the HTTP status each answers; 500 for any other.
STATUS_OF_CODE: dict[str, int] = {
    "usage": 400,
    "bad_input": 400,
    "unparseable": 400,
    "bad_request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "no_project_store": 404,
    "method_not_allowed": 405,
    "rejected_value": 409,
    "already_superseded": 409,
    "already_resolved": 409,
    "bad_state": 409,
    "run_mismatch": 409,
    "raw_append_only": 409,
    "ambiguous_prefix": 409,
    "low_transfer_score": 409,
    "secret_detected": 409,
    "not_merged": 422,
    "no_recent_recall": 409,
    "payload_too_large": 413,
    "rate_limited": 429,
    "not_implemented": 501,
    codes.NOT_ON_TEAM_STORE: 501,
    "mode_not_available": 501,
    "embeddings_unavailable": 501,
    "connector_not_configured": 503,
    "slack_error": 502,
    "slack_unreachable": 502,
    "shutting_down": 503,
    codes.DAEMON_OUTDATED: 503,
    sqlite_errors.CORRUPT: 503,
    "bad_config": 503,
    "foreign_store": 503,
    "store_too_new": 503,
    codes.TEAM_UNREACHABLE: 503,
    codes.COMMIT_UNKNOWN: 503,
    "file_too_large": 413,
    "export_too_large": 413,
    "timeout": 504,
    sqlite_errors.DISK_FULL: 507,
}


class HttpError(Exception):
    """A request refused at the HTTP layer (auth, limits, malformed input), with its status."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


def error_body(code: str, message: str, hint: str | None = None) -> bytes:
    body: dict[str, Any] = {"error": message, "code": code}
    if hint:
        body["hint"] = hint
    return msgspec.json.encode(body)


def from_hippo_error(exc: HippoError) -> tuple[int, bytes]:
    """The status and body a handler's HippoError answers."""
    return STATUS_OF_CODE.get(exc.code, 500), error_body(exc.code, exc.message, exc.hint)
