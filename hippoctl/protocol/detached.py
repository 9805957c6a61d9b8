"""How a daemon is started in the background, by the client (hippoctl/spawn.py) and by
`hippod run --detach`: the command, and the options that detach it from its parent.

On Windows it is `pythonw.exe -m hippod run`, with no console window and outside the parent's
console and process group, so closing the terminal or the agent does not stop it; elsewhere, a
new session. Standard library only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any


def windowless(python: str) -> str:
    """pythonw.exe beside a Windows interpreter (it opens no console window), when it is there."""
    folder, name = os.path.split(python)
    if name.lower() == "python.exe":
        candidate = os.path.join(folder, "pythonw.exe")
        if os.path.isfile(candidate):
            return candidate
    return python


def daemon_python(python: str = sys.executable) -> str:
    """The interpreter to run the daemon with: on Windows the windowless one."""
    return windowless(python) if sys.platform == "win32" else python


def daemon_argv() -> list[str]:
    """The command that runs a daemon: `<python> -m hippod run`."""
    return [daemon_python(), "-m", "hippod", "run"]


def detached_options() -> dict[str, Any]:
    """subprocess.Popen's keywords that detach the child from this process and its terminal."""
    if sys.platform == "win32":
        flags = (
            subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW
        )
        return {"creationflags": flags}
    return {"start_new_session": True}
