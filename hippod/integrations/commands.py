"""The hook commands hippod installs, and which commands count as its own (integrations.md §3, §5, §8).

Every installed command is `<prefix> <suffix>`: the prefix is how the installing client runs itself
from any shell (its quoted absolute path, or `<python> -m hippoctl`; see hippoctl/selfcommand.py) and
the suffix is one of the verbs below. Identity is the exact command string. Besides the current
command, an entry owns these older forms, which install replaces in place and uninstall removes:

1. the same suffix after another hippoctl prefix: the bare `hippoctl` earlier versions wrote (which a
   host whose PATH lacks the client's folder cannot start), an install that has since moved, a second
   one;
2. the original hippo's command for the same event: `hippo <its arguments>`, also with the
   `--log-file <path>` (or, for `last-sleep`, `--path <path>`) argument its later versions added;
3. for SessionEnd, the original's older `hippo sleep` and `hippo capture --last-session` pair, and
   its oldest `Stop` entry running `hippo sleep` (removed; SessionEnd replaces it).

A user's own hook that merely calls hippoctl (`hippoctl recall foo`) matches none of these and stays.
"""

from __future__ import annotations

import ntpath
import shlex
import sys
from dataclasses import dataclass

PROMPT_SUFFIX = "context --pinned-only --include-recent 5 --format additional-context"

# Names the first word of an installed command can have (selfcommand.py: the script, or its path).
_HIPPOCTL_NAMES = frozenset({"hippoctl", "hippoctl.exe", "hippoctl-script.py"})
_ORIGINAL_NAMES = frozenset({"hippo", "hippo.cmd"})


@dataclass(frozen=True)
class HookSpec:
    """One hook entry: its event, optional matcher, the suffix after the prefix, its timeout (s), and
    the original hippo's argument forms for it (`legacy`, with `path_arg` optionally appended)."""

    event: str
    suffix: str
    timeout: int
    matcher: str | None = None
    legacy: tuple[str, ...] = ()
    path_arg: str | None = None

    def command(self, prefix: str) -> str:
        return f"{prefix} {self.suffix}"

    def owns(self, command: str) -> bool:
        """Whether `command` is this entry's current command under any hippoctl prefix, or an older
        form of it."""
        return is_hippod_form(command, self.suffix) or is_original_form(command, self.legacy, self.path_arg)


SESSION_END = HookSpec(
    "SessionEnd",
    "session-end",
    5,
    legacy=("session-end", "sleep", "capture --last-session"),
    path_arg="--log-file",
)
LAST_SLEEP = HookSpec("SessionStart", "last-sleep", 5, legacy=("last-sleep",), path_arg="--path")
COMPACT_RESUME = HookSpec("SessionStart", "compact-resume", 10, matcher="compact", legacy=("compact-resume",))
PROMPT = HookSpec(
    "UserPromptSubmit",
    PROMPT_SUFFIX,
    5,
    legacy=(PROMPT_SUFFIX, "context --pinned-only --format additional-context"),
)
PRE_COMPACT = HookSpec("PreCompact", "pre-compact", 30, legacy=("pre-compact",), path_arg="--log-file")
POST_COMPACT = HookSpec("PostCompact", "post-compact", 30, legacy=("post-compact",), path_arg="--log-file")
CAPTURE_ERROR = HookSpec("PostToolUseFailure", "capture-error", 5, legacy=("capture-error",))

# Claude Code's seven entries, in the order of integrations.md §3's table.
CLAUDE_HOOKS = (SESSION_END, LAST_SLEEP, COMPACT_RESUME, PROMPT, PRE_COMPACT, POST_COMPACT, CAPTURE_ERROR)
# Codex's two (§5).
CODEX_HOOKS = (PROMPT, COMPACT_RESUME)
# The original's per-turn `Stop` entry: only ever removed.
LEGACY_STOP = HookSpec("Stop", "", 0, legacy=("sleep",), path_arg="--log-file")


def split(command: str) -> list[str] | None:
    """The command's words as the platform's shell reads them (selfcommand.py quotes for it); None
    when it does not parse (unbalanced quotes)."""
    try:
        if sys.platform != "win32":
            return shlex.split(command)
        words = shlex.split(command, posix=False)
    except ValueError:
        return None
    return [w[1:-1] if len(w) > 1 and w[0] == w[-1] == '"' else w for w in words]


def _name(word: str) -> str:
    # ntpath splits on both separators, so a Windows path is named the same as a POSIX one.
    return ntpath.basename(word).lower()


def is_hippoctl_prefix(words: list[str]) -> bool:
    """`hippoctl`, a path to it, or `<interpreter> -m hippoctl`."""
    if len(words) == 1:
        return _name(words[0]) in _HIPPOCTL_NAMES
    return len(words) == 3 and words[1:] == ["-m", "hippoctl"]


def starts_hippoctl(words: list[str]) -> bool:
    """Whether the words start hippoctl with some verb: a hippoctl prefix and more after it."""
    return any(is_hippoctl_prefix(words[:n]) and len(words) > n for n in (1, 3))


def is_hippod_form(command: str, suffix: str) -> bool:
    """Whether `command` is `<some hippoctl prefix> <suffix>`."""
    words, tail = split(command), suffix.split()
    if words is None or not tail or len(words) <= len(tail) or words[-len(tail) :] != tail:
        return False
    return is_hippoctl_prefix(words[: -len(tail)])


def is_original_form(command: str, legacy: tuple[str, ...], path_arg: str | None) -> bool:
    """Whether `command` is `hippo <one of legacy>`, optionally followed by `<path_arg> <value>`."""
    words = split(command)
    if not words or _name(words[0]) not in _ORIGINAL_NAMES:
        return False
    rest = words[1:]
    if path_arg is not None and len(rest) >= 2 and rest[-2] == path_arg:
        rest = rest[:-2]
    return any(rest == form.split() for form in legacy)


def runs_hippo(command: str) -> bool:
    """Whether a command starts hippoctl or the original hippo at all (for opencode.json's stray keys)."""
    words = split(command)
    if not words:
        return False
    if _name(words[0]) in _HIPPOCTL_NAMES | _ORIGINAL_NAMES:
        return True
    return len(words) >= 3 and words[1:3] == ["-m", "hippoctl"]


def windows_command(prefix: str, suffix: str) -> str:
    """Codex's `commandWindows`: `hippoctl.exe …` for a plain `hippoctl` prefix, else the command as is."""
    return f"hippoctl.exe {suffix}" if prefix == "hippoctl" else f"{prefix} {suffix}"


def mcp_argv(prefix: str) -> list[str]:
    """The words that start `hippoctl mcp` under `prefix` (an MCP client's `command` and `args`)."""
    return [*(split(prefix) or ["hippoctl"]), "mcp"]
