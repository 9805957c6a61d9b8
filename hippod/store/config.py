"""A store's config.json, deep-merged one level over the defaults (memory-model.md §4)."""

from __future__ import annotations

import os
from typing import Any

from hippod.base.errors import HippoError
from hippod.base.jsonfile import merge, read_object

# all-MiniLM-L6-v2 with int8 weights (hippod/embed/minilm_model.py); the only model hippod loads.
DEFAULT_MODEL = "all-MiniLM-L6-v2:int8"
# The cosine a memory that shares no term with the query must reach to be returned: the lowest
# multiple of 0.05 that at most 1% of unrelated question-memory pairs without a shared term reach,
# measured by bench/cosine_floor.py on LoCoMo and LongMemEval (bench/RESULTS.md).
DEFAULT_COSINE_FLOOR = 0.40

STORE_DEFAULTS: dict[str, Any] = {
    "defaultHalfLifeDays": 365,
    "defaultBudget": 4000,
    "defaultContextBudget": 1500,
    "decayBasis": "adaptive",
    "autoLearnOnSleep": True,
    "autoShareOnSleep": True,
    # Phase 12 also queues what it shares for the team server, when this hippod is in a team.
    "autoShareToTeam": False,
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
    # Merged recall multiplies project hits by localBump and team hits (the team's cache) by teamBump.
    "search": {"localBump": 1.2, "teamBump": 1.0},
    "mmr": {"enabled": True, "lambda": 0.7},
    "embeddings": {
        "enabled": "auto",
        "provider": "local",
        "model": DEFAULT_MODEL,
        "hybridWeight": 0.6,
        "cosineFloor": DEFAULT_COSINE_FLOOR,
    },
    # `recall --reranker` when the verb names none: off, local, cohere[:model] or voyage[:model];
    # topN results are reordered (recall/rerank.py).
    "reranker": {"default": "off", "topN": 20},
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
    # Sleep's fact extraction through Anthropic's Messages API (sleep.md §4): "auto" runs it when
    # ANTHROPIC_API_KEY is in the daemon's environment. One call per memory sent, at most 20 memories
    # a sleep; maxCalls and maxTokens cap what one sleep may spend, timeoutSeconds one call's wait.
    "extraction": {
        "enabled": "auto",
        "model": "claude-sonnet-4-6",
        "maxCalls": 20,
        "maxTokens": 50000,
        "timeoutSeconds": 60,
        "maxSeconds": 120,
    },
    "dormant": {"enabled": True, "retentionDays": 180},
    "agentMemories": {
        "tools": ["claude-code", "codex", "gemini-cli", "copilot-vscode", "openclaw", "qwen-code"],
        "paths": {},
    },
    "memoryValue": {"enabled": False},
    "mirrors": {"layout": "memory"},
}


def mirror_layout(values: dict[str, Any]) -> str:
    """`mirrors.layout` of a store's settings (mirrors/mirrors.py); a value that is not an object is
    returned as it is written, for the mirror writer to name."""
    mirrors = values["mirrors"]
    return str(mirrors.get("layout") if isinstance(mirrors, dict) else mirrors)


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


class ConfigFile:
    """A store's config.json over the defaults, read again whenever the file changes, so an edit
    applies without a daemon restart."""

    def __init__(self, root: str) -> None:
        self.path = os.path.join(root, "config.json")
        self._read: tuple[tuple[int, int, int] | None, dict[str, Any], str | None] | None = None

    def current(self) -> dict[str, Any]:
        """The settings in force. A file that does not parse is an error for whoever reads it, never
        a silent fall back to the defaults: HippoError `bad_config`, naming the file and the problem."""
        stamp = _stamp(self.path)
        if self._read is None or self._read[0] != stamp:
            overrides, problem = read_object(self.path)
            self._read = (stamp, merge(STORE_DEFAULTS, overrides), problem)
        _, values, problem = self._read
        if problem is not None:
            raise HippoError("bad_config", problem, hint=f"fix {self.path}")
        return values
