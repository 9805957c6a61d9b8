"""A check for schemathesis's runner (loaded through SCHEMATHESIS_HOOKS): no response is a 500.

The API answers documented 5xx on purpose (501 for what hippod does not keep, 503 for a webhook
without its secret), so schemathesis's own not_a_server_error, which counts every 5xx, is replaced
by this one: an internal error, or anything not in the one error shape, fails.
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis


@schemathesis.check
def no_internal_error(ctx: Any, response: Any, case: Any) -> bool | None:
    if response.status_code == 500:
        raise AssertionError(f"500 Internal Server Error: {response.text[:300]}")
    if response.status_code >= 400:
        body = json.loads(response.content)
        if not isinstance(body.get("error"), str) or not isinstance(body.get("code"), str):
            raise AssertionError(
                f"a {response.status_code} outside the one error shape: {response.text[:300]}"
            )
    return None
