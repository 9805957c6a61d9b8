"""How the hooks hippod installs, and the MCP settings `init` prints, should call this client
(integrations.md §3, §11).

Always by absolute path, never by a bare `hippoctl`: agent hosts run hooks with their own PATH, which
rarely holds the virtualenv or pipx folder this client lives in. The path is this client's script as it
was run, made absolute (a link such as pipx's `~/.local/bin/hippoctl` is kept as the user sees it), or,
run as `python -m hippoctl`, the interpreter and `-m hippoctl`, as the service files name the
interpreter.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

_SCRIPT_NAMES = ("hippoctl", "hippoctl.exe", "hippoctl-script.py")


# A word every shell reads as itself: no spaces, quotes, or characters bash or PowerShell expand.
_PLAIN_WINDOWS = re.compile(r"[A-Za-z0-9_.:/+@~-]+")


def _short_path(path: str) -> str | None:
    """The 8.3 form of an existing path (no spaces), or None where the volume keeps none."""
    if sys.platform != "win32":
        return None
    import ctypes

    size = ctypes.windll.kernel32.GetShortPathNameW(path, None, 0)
    if not size:
        return None
    buffer = ctypes.create_unicode_buffer(size)
    if not ctypes.windll.kernel32.GetShortPathNameW(path, buffer, size):
        return None
    return str(buffer.value)


def windows_word(path: str) -> str:
    """A Windows path as one word for the shells agent hosts run hooks with there: Git Bash
    (Claude Code when it finds one), PowerShell (Claude Code otherwise, Codex) and cmd.exe.

    Forward slashes, since bash takes a backslash for an escape; no quotes when none are needed,
    since PowerShell takes a quoted first word for a string, not a command; for a path with
    spaces its 8.3 short form, which has none; and double quotes only where no short form exists.
    """
    plain = path.replace("\\", "/")
    if _PLAIN_WINDOWS.fullmatch(plain):
        return plain
    short = _short_path(path)
    if short is not None and _PLAIN_WINDOWS.fullmatch(short.replace("\\", "/")):
        return short.replace("\\", "/")
    return subprocess.list2cmdline([plain])


def _quote(parts: list[str]) -> str:
    if sys.platform == "win32":
        return " ".join(windows_word(part) if os.path.isabs(part) else part for part in parts)
    return shlex.join(parts)


def hook_argv() -> list[str]:
    """The words that start this client from any shell: its absolute script path, or
    `<interpreter> -m hippoctl`."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0).lower() in _SCRIPT_NAMES:
        script = os.path.abspath(argv0)
        if sys.platform == "win32" and os.path.isfile(script + ".exe"):
            # pip's launcher (distlib) runs the script with `.exe` taken off sys.argv[0].
            script += ".exe"
        return [script]
    return [sys.executable, "-m", "hippoctl"]


def hook_command() -> str:
    """The command prefix installed hooks use to run this client, quoted for the platform's shell."""
    return _quote(hook_argv())
