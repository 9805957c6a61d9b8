"""A spend cap: how many calls and tokens one run (a sleep) may use. A call is one HTTP request,
retries included: the `Caller` given the cap checks `allows()` before each request and counts it
(`attempt()`); the run `charge()`s the tokens each answer reports."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Spend:
    """What a run may spend and has spent. A limit of 0 or less means nothing may be spent."""

    max_calls: int
    max_tokens: int
    calls: int = 0
    tokens: int = 0

    def allows(self) -> bool:
        """Whether one more call fits: calls left, and tokens not yet used up."""
        return self.calls < self.max_calls and self.tokens < self.max_tokens

    def attempt(self) -> None:
        """Count one HTTP request about to be made."""
        self.calls += 1

    def charge(self, tokens: int) -> None:
        """Count the `tokens` an answer used (input and output together)."""
        self.tokens += max(0, tokens)

    def describe(self) -> str:
        """`N of M calls, T of U tokens`, for a report line."""
        return f"{self.calls} of {self.max_calls} calls, {self.tokens} of {self.max_tokens} tokens"
