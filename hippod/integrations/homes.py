"""Where each agent host and service manager keeps the files hippod wires (the daemon's environment)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping


def user_home(env: Mapping[str, str] = os.environ) -> str:
    return env.get("HOME") or env.get("USERPROFILE") or os.path.expanduser("~")


def config_home(env: Mapping[str, str] = os.environ) -> str:
    """`$XDG_CONFIG_HOME`, else `~/.config` (also where OpenCode and systemd look)."""
    return env.get("XDG_CONFIG_HOME") or os.path.join(user_home(env), ".config")


def claude_home(env: Mapping[str, str] = os.environ) -> str:
    """`$CLAUDE_CONFIG_DIR`, else `~/.claude` (integrations.md §3)."""
    return env.get("CLAUDE_CONFIG_DIR") or os.path.join(user_home(env), ".claude")


def codex_home(env: Mapping[str, str] = os.environ) -> str:
    """`$CODEX_HOME`, else `~/.codex` (integrations.md §5)."""
    return env.get("CODEX_HOME") or os.path.join(user_home(env), ".codex")


def opencode_home(env: Mapping[str, str] = os.environ) -> str:
    """OpenCode's user config folder, which holds `plugins/` (integrations.md §6)."""
    return os.path.join(config_home(env), "opencode")


def systemd_user_dir(env: Mapping[str, str] = os.environ) -> str:
    return os.path.join(config_home(env), "systemd", "user")


def launch_agents_dir(env: Mapping[str, str] = os.environ) -> str:
    return os.path.join(user_home(env), "Library", "LaunchAgents")


def platform() -> str:
    """'linux', 'darwin' or 'win32': which service manager applies."""
    if sys.platform.startswith("linux"):
        return "linux"
    return "darwin" if sys.platform == "darwin" else "win32" if sys.platform == "win32" else sys.platform
