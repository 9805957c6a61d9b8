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
import shlex
import subprocess
import sys

_SCRIPT_NAMES = ("hippoctl", "hippoctl.exe", "hippoctl-script.py")


def _quote(parts: list[str]) -> str:
    if sys.platform == "win32":
        return subprocess.list2cmdline(parts)
    return shlex.join(parts)


def hook_argv() -> list[str]:
    """The words that start this client from any shell: its absolute script path, or
    `<interpreter> -m hippoctl`."""
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0).lower() in _SCRIPT_NAMES:
        return [os.path.abspath(argv0)]
    return [sys.executable, "-m", "hippoctl"]


def hook_command() -> str:
    """The command prefix installed hooks use to run this client, quoted for the platform's shell."""
    return _quote(hook_argv())
