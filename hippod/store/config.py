"""A store's config.json, deep-merged one level over the defaults (memory-model.md §4)."""

from __future__ import annotations

import copy
import json
import os
from typing import Any

DEFAULTS: dict[str, Any] = {
    "defaultHalfLifeDays": 365,
    "defaultBudget": 4000,
    "defaultContextBudget": 1500,
    "decayBasis": "adaptive",
    "autoLearnOnSleep": True,
    "autoShareOnSleep": True,
    "autoSleep": {"enabled": True, "threshold": 50},
    "global": {"enabled": True},
    "gitLearnPatterns": [
        "fix",
        "revert",
        "bug",
        "error",
        "hotfix",
        "bugfix",
        "refactor",
        "perf",
        "chore",
        "breaking",
        "deprecate",
    ],
    "search": {"localBump": 1.2},
    "mmr": {"enabled": True, "lambda": 0.7},
    "embeddings": {
        "enabled": "auto",
        "provider": "local",
        "model": "wordllama:l2_supercat_256",
        "hybridWeight": 0.6,
    },
    "replay": {"count": 5},
    "autoTraceCapture": True,
    "autoTraceWindowDays": 7,
    "pinnedInject": {
        "enabled": True,
        "budget": 1500,
        "skipUnchanged": True,
        "refreshTurns": 10,
        "promptRecall": False,
    },
    "contextProjectIsolation": True,
    "extraction": {"enabled": "auto", "model": "claude-sonnet-4-6"},
    "dormant": {"enabled": True, "retentionDays": 180},
    "agentMemories": {"tools": ["claude", "codex", "gemini", "qwen", "copilot", "openclaw"]},
    "memoryValue": {"enabled": False},
}


def merge(defaults: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Overrides win key by key; for dict values, one level deeper."""
    merged = copy.deepcopy(defaults)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def load(root: str) -> tuple[dict[str, Any], str | None]:
    """Read <root>/config.json; returns (config, warning). A missing file is not a warning."""
    path = os.path.join(root, "config.json")
    try:
        with open(path, encoding="utf-8") as handle:
            raw = json.load(handle)
    except FileNotFoundError:
        return merge(DEFAULTS, {}), None
    except (OSError, ValueError) as exc:
        return merge(DEFAULTS, {}), f"{path} is unreadable ({exc.__class__.__name__}); using defaults"
    if not isinstance(raw, dict):
        return merge(DEFAULTS, {}), f"{path} is not a JSON object; using defaults"
    return merge(DEFAULTS, raw), None
