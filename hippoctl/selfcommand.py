"""How the hooks hippod installs should call this client (integrations.md §3).

`hippoctl` when the `hippoctl` found on PATH is this very client, else this client's absolute quoted
path, else (run as `python -m hippoctl`) the interpreter and `-m hippoctl`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys


def _quote(parts: list[str]) -> str:
    if sys.platform == "win32":
        return subprocess.list2cmdline(parts)
    return shlex.join(parts)


def hook_command() -> str:
    """The command prefix installed hooks use to run this client."""
    argv0 = sys.argv[0] if sys.argv else ""
    name = os.path.basename(argv0).lower()
    if name in ("hippoctl", "hippoctl.exe", "hippoctl-script.py"):
        script = os.path.realpath(argv0)
        on_path = shutil.which("hippoctl")
        if on_path is not None and os.path.realpath(on_path) == script:
            return "hippoctl"
        return _quote([script])
    return _quote([sys.executable, "-m", "hippoctl"])
