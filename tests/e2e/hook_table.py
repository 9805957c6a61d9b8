"""Claude Code's seven hook entries as integrations.md §3's table lists them, for the tests that check
what `init` and `hook install` write: (event, matcher, command after the hippoctl prefix, timeout)."""

from __future__ import annotations

CLAUDE_TABLE = [
    ("SessionEnd", None, "session-end", 5),
    ("SessionStart", None, "last-sleep", 5),
    ("SessionStart", "compact", "compact-resume", 10),
    ("UserPromptSubmit", None, "context --pinned-only --include-recent 5 --format additional-context", 5),
    ("PreCompact", None, "pre-compact", 30),
    ("PostCompact", None, "post-compact", 30),
    ("PostToolUseFailure", None, "capture-error", 5),
]
