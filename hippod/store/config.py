"""A store's config.json, deep-merged one level over the defaults (memory-model.md §4)."""

from __future__ import annotations

import os
from typing import Any

from hippod.jsonfile import merge, read_object

STORE_DEFAULTS: dict[str, Any] = {
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
        "cosineFloor": 0.3,
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
    "agentMemories": {
        "tools": ["claude-code", "codex", "gemini-cli", "copilot-vscode", "openclaw", "qwen-code"],
        "paths": {},
    },
    "memoryValue": {"enabled": False},
}


def load(root: str) -> tuple[dict[str, Any], str | None]:
    """Read <root>/config.json over the defaults; returns (config, warning)."""
    overrides, warning = read_object(os.path.join(root, "config.json"))
    return merge(STORE_DEFAULTS, overrides), warning
