"""Each model API provider: where it is, which environment variable holds its key, and the headers
that carry the key. A base URL can be overridden from the daemon's environment (as Anthropic's SDK
reads ANTHROPIC_BASE_URL), which is also how the tests point hippod at a local stub."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from hippod.base.errors import HippoError

# The Messages API version hippod speaks (Anthropic's `anthropic-version` header).
ANTHROPIC_VERSION = "2023-06-01"

KEY_MISSING = "model_key_missing"


@dataclass(frozen=True)
class Provider:
    """One API: its name, default base URL, the variables naming its key and base URL."""

    name: str
    title: str
    default_url: str
    key_env: str
    url_env: str
    # Other names the key is known by, read when `key_env` is unset.
    key_aliases: tuple[str, ...] = ()

    def base_url(self, env: Mapping[str, str] | None = None) -> str:
        """The base URL calls go to: `url_env` in the daemon's environment, else the provider's."""
        env = os.environ if env is None else env
        return (env.get(self.url_env, "").strip() or self.default_url).rstrip("/")

    def key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The API key from the daemon's environment, or None when it is unset or blank."""
        env = os.environ if env is None else env
        for name in (self.key_env, *self.key_aliases):
            if value := env.get(name, "").strip():
                return value
        return None

    def require_key(self, env: Mapping[str, str] | None = None, *, purpose: str) -> str:
        """The key, or a one-line error naming the variable to set."""
        key = self.key(env)
        if key is None:
            raise HippoError(
                KEY_MISSING,
                f"{purpose} needs {self.key_env} in the daemon's environment, and it is not set",
                hint=f"set {self.key_env} where hippod runs (its service file or `hippod run --env`), "
                "then `hippoctl daemon restart`",
            )
        return key

    def headers(self, key: str) -> dict[str, str]:
        """The headers that authenticate a call with `key`."""
        if self.name == "anthropic":
            return {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}
        return {"authorization": f"Bearer {key}"}


ANTHROPIC = Provider(
    "anthropic", "Anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"
)
OPENAI = Provider("openai", "OpenAI", "https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL")
VOYAGE = Provider("voyage", "Voyage AI", "https://api.voyageai.com/v1", "VOYAGE_API_KEY", "VOYAGE_BASE_URL")
COHERE = Provider(
    "cohere", "Cohere", "https://api.cohere.com", "CO_API_KEY", "CO_API_URL", key_aliases=("COHERE_API_KEY",)
)

PROVIDERS: dict[str, Provider] = {p.name: p for p in (ANTHROPIC, OPENAI, VOYAGE, COHERE)}
