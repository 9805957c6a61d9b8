"""Whether sleep's fact extraction runs, and with what: a store's `extraction` settings read against
the daemon's environment (memory-model.md §4). Sleep, `refine` and doctor's Network check all read
it here, so what doctor says is what sleep does."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hippod.remote.providers import ANTHROPIC

# What one sleep sends at most: the newest memories not yet processed (sleep.md §4).
MEMORIES_PER_SLEEP = 20
DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_MAX_CALLS = 20
DEFAULT_MAX_TOKENS = 50_000
DEFAULT_TIMEOUT_S = 60.0
# How long phase 7 may take in all, retries and their waits included, before sleep goes on without
# the memories not yet answered.
DEFAULT_MAX_SECONDS = 120.0


@dataclass(frozen=True)
class ExtractionConfig:
    """A store's extraction settings with the key they would use."""

    enabled: object  # True, False or "auto", as written
    model: str
    max_calls: int
    max_tokens: int
    timeout_s: float
    max_s: float
    key: str | None

    @property
    def active(self) -> bool:
        """Whether sleep sends memories: turned on (true, or "auto") and a key to send them with."""
        return self.key is not None and self.enabled is not False and self.enabled != "false"

    @property
    def turned_off(self) -> bool:
        return self.enabled is False or self.enabled == "false"

    def base_url(self, env: Mapping[str, str] | None = None) -> str:
        return ANTHROPIC.base_url(env)


def _number(value: Any, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return float(value)


def extraction_config(config: Mapping[str, Any], env: Mapping[str, str] | None = None) -> ExtractionConfig:
    """The `extraction` object of a store's settings (defaults filled in), with the key from `env`
    (the daemon's environment). A value of the wrong type falls back to its default."""
    env = os.environ if env is None else env
    raw = config.get("extraction")
    section: Mapping[str, Any] = raw if isinstance(raw, dict) else {"enabled": raw}
    model = section.get("model")
    return ExtractionConfig(
        enabled=section.get("enabled", "auto"),
        model=model.strip() if isinstance(model, str) and model.strip() else DEFAULT_MODEL,
        max_calls=max(0, int(_number(section.get("maxCalls"), DEFAULT_MAX_CALLS))),
        max_tokens=max(0, int(_number(section.get("maxTokens"), DEFAULT_MAX_TOKENS))),
        timeout_s=max(0.1, _number(section.get("timeoutSeconds"), DEFAULT_TIMEOUT_S)),
        max_s=max(1.0, _number(section.get("maxSeconds"), DEFAULT_MAX_SECONDS)),
        key=ANTHROPIC.key(env),
    )
