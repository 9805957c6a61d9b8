"""The daemon's part of a support bundle: settings with secrets masked, and store counts (never text)."""

from __future__ import annotations

import re
from typing import Any

from hippoctl.protocol.replies_doctor import StoreCounts
from hippod.base.config import load_daemon_config
from hippod.doctor.run import Inputs, inspect_stores, store_configs
from hippod.doctor.stores import counts_of

MASK = "***"
# A key naming a credential: apiKey, api_key, token, secret, password, passwd, credentials, auth...
SECRET_KEY = re.compile(r"key|token|secret|passw|credential|auth", re.IGNORECASE)


def _secret(key: object, value: Any) -> bool:
    return bool(SECRET_KEY.search(str(key))) and value not in (None, "")


def redact(value: Any) -> Any:
    """A copy of a JSON value with every value under a secret-looking key masked (at any depth)."""
    if isinstance(value, dict):
        return {k: (MASK if _secret(k, v) else redact(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def merged_config(inputs: Inputs) -> dict[str, Any]:
    """daemon.json and each store's config.json over their defaults, masked; parse problems noted."""
    daemon = load_daemon_config(inputs.global_root)
    config: dict[str, Any] = {"daemon": redact(daemon.values)}
    warnings = ([daemon.unreadable] if daemon.unreadable else []) + daemon.warnings
    if warnings:
        config["daemon_warnings"] = warnings
    for store in store_configs(inputs):
        config[store.kind] = redact(store.values)
        if store.problem is not None:
            config[f"{store.kind}_warning"] = store.problem
    return config


def store_counts(inputs: Inputs) -> list[StoreCounts]:
    return [counts_of(f) for f in inspect_stores(inputs)]
