"""One JSON POST to a model API, with the retries every provider documents: a 429 waits its
`retry-after`, an overloaded (529) or failing (5xx) server and a timeout or dropped connection are
tried again with a growing pause, and a refused key (401, 403) or a bad request (4xx) fails at
once. Every failure is a `HippoError` whose one line names the provider, the status and the API's
own message, and whose details hold the status and the API's error type when the API answered.

A run with a spend cap (`Spend`) hands it to its `Caller`, which counts every HTTP request against
it, retries included, and refuses to make one the cap has no room for (`SPENT`)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hippod.base.errors import HippoError
from hippod.remote.providers import Provider
from hippod.remote.spend import Spend

if TYPE_CHECKING:
    import httpx

API_ERROR = "model_api_error"
# A request the run's spend cap has no room for, never sent.
SPENT = "model_spend_cap"

# Each call waits at most this long for an answer; the SDKs' defaults are longer, but a sleep
# or a recall should not hang on one call.
TIMEOUT_S = 60.0
RETRIES = 2
# The pause before retry n is BACKOFF_S × 2^n, unless the server names one (retry-after), which
# is honoured up to MAX_WAIT_S.
BACKOFF_S = 0.5
MAX_WAIT_S = 30.0
_RETRIED = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


@dataclass(frozen=True)
class Policy:
    """How patient a caller is: the time per attempt, the retries after the first, the pause."""

    timeout_s: float = TIMEOUT_S
    retries: int = RETRIES
    backoff_s: float = BACKOFF_S
    # The longest a server's `retry-after` is waited for; a longer one is waited this long.
    max_wait_s: float = MAX_WAIT_S


def api_error_type(body: Any) -> str | None:
    """The API's own error type (`invalid_request_error`, ...) from an error body, if it names one."""
    error = body.get("error") if isinstance(body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) and kind else None


def api_message(body: Any) -> str:
    """The API's own error message from the error shapes of Anthropic (`{"type": "error", "error":
    {"type", "message"}}`), OpenAI (`{"error": {"message", "type", "code"}}`), Voyage (`{"detail"}`)
    and Cohere (`{"message"}`); else empty."""
    if not isinstance(body, dict):
        return ""
    error = body.get("error")
    if isinstance(error, dict):
        kind = error.get("type")
        message = str(error.get("message") or "")
        return f"{kind}: {message}" if isinstance(kind, str) and kind and message else message
    for field in ("message", "detail"):
        if isinstance(body.get(field), str):
            return str(body[field])
    return ""


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The server's `retry-after` in seconds (an HTTP date is not used by these APIs), or None."""
    value = headers.get("retry-after", "").strip()
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


class Caller:
    """An open HTTP client for one provider's calls in a run (a sleep, a batch): one connection
    kept, closed with `aclose()` or `async with`. With `spend`, every request made is one call of it."""

    def __init__(
        self, provider: Provider, key: str, policy: Policy | None = None, spend: Spend | None = None
    ) -> None:
        self.provider = provider
        self.policy = policy or Policy()
        self.spend = spend
        # Imported here: the daemon loads httpx only once a model API is turned on and called.
        import httpx

        self._http_error = httpx.HTTPError
        self._timeout = httpx.TimeoutException
        self._client = httpx.AsyncClient(
            base_url=provider.base_url(),
            headers={**provider.headers(key), "content-type": "application/json"},
            timeout=self.policy.timeout_s,
            # No proxy or netrc from the environment: the key goes where the base URL says, only.
            trust_env=False,
        )

    async def __aenter__(self) -> Caller:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST `body` as JSON to `path` under the base URL; the answer's JSON object."""
        name = self.provider.title
        for attempt in range(self.policy.retries + 1):
            last = attempt == self.policy.retries
            if self.spend is not None:
                if not self.spend.allows():
                    raise HippoError(SPENT, f"{name} API: the spend cap has no room for another call")
                self.spend.attempt()
            try:
                answer = await self._client.post(path, json=dict(body))
            except self._http_error as exc:
                if last:
                    raise HippoError(API_ERROR, f"{name} API: {self._unanswered(exc)}") from None
                await asyncio.sleep(self._pause(attempt, None))
                continue
            if answer.status_code == 200:
                return _json_object(name, answer)
            if answer.status_code in _RETRIED and not last:
                await asyncio.sleep(self._pause(attempt, retry_after(answer.headers)))
                continue
            raise _failure(name, answer)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _unanswered(self, exc: httpx.HTTPError) -> str:
        if isinstance(exc, self._timeout):
            return f"no answer within {self.policy.timeout_s:g} s"
        return f"cannot reach {self.provider.base_url()}: {exc}"

    def _pause(self, attempt: int, named: float | None) -> float:
        if named is not None:
            return min(named, self.policy.max_wait_s)
        return float(min(self.policy.backoff_s * 2**attempt, self.policy.max_wait_s))


def _json_object(name: str, answer: httpx.Response) -> dict[str, Any]:
    try:
        body = answer.json()
    except ValueError:
        raise HippoError(API_ERROR, f"{name} API: the answer is not JSON") from None
    if not isinstance(body, dict):
        raise HippoError(API_ERROR, f"{name} API: the answer is not a JSON object")
    return body


def _failure(name: str, answer: httpx.Response) -> HippoError:
    """`<name> API: HTTP <status> (<what it means>): <the API's message>`, with the status and the
    API's error type in its details."""
    try:
        body = answer.json()
    except ValueError:
        body = None
    message = api_message(body) if body is not None else answer.text[:200]
    meaning = {
        401: "the key was refused",
        403: "the key may not do this",
        429: "rate limited, still after retries",
        529: "overloaded, still after retries",
    }.get(answer.status_code)
    status = f"HTTP {answer.status_code}" + (f" ({meaning})" if meaning else "")
    line = f"{name} API: {status}" + (f": {message}" if message else "")
    return HippoError(API_ERROR, line, details={"status": answer.status_code, "type": api_error_type(body)})
