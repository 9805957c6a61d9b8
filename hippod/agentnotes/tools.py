"""The agent tools whose own memory notes hippod reads (ingest.md §4): ids, homes, tool selection.

Homes, in order: `agentMemories.paths.<tool>` in the store config (the tool's home folder; `~`
expanded), then the tool's own environment override, then the default:

| tool            | env override        | default home                                                     |
|-----------------|---------------------|------------------------------------------------------------------|
| claude-code     | CLAUDE_CONFIG_DIR   | ~/.claude                                                        |
| codex           | CODEX_HOME          | ~/.codex                                                         |
| gemini-cli      | —                   | ~/.gemini                                                        |
| copilot-vscode  | —                   | VS Code's `Code/User` under the platform config dir              |
|                 |                     | ($XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application   |
|                 |                     | Support on macOS, %APPDATA% on Windows)                          |
| openclaw        | —                   | ~/.openclaw/workspace                                            |
| qwen-code       | —                   | ~/.qwen                                                          |

The environment is the daemon's own: the client does not forward CLAUDE_CONFIG_DIR or CODEX_HOME,
and the daemon a client spawns inherits the client's environment. What is read under each home is
described in agentnotes/sources.py.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import Any

TOOLS = ("claude-code", "codex", "gemini-cli", "copilot-vscode", "openclaw", "qwen-code")
TOOLS_ENV = "HIPPO_AGENT_MEMORY_TOOLS"

_ENV_HOMES = {"claude-code": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME"}
_DOT_HOMES = {
    "claude-code": ".claude",
    "codex": ".codex",
    "gemini-cli": ".gemini",
    "openclaw": os.path.join(".openclaw", "workspace"),
    "qwen-code": ".qwen",
}
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")


def encode_root(root: str) -> str:
    """`<encoded root>`: the absolute project root with every character outside [A-Za-z0-9] as `-`."""
    return _NOT_ALNUM.sub("-", root)


def _user_home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def _vscode_user_dir(env: Mapping[str, str]) -> str:
    home = _user_home(env)
    if sys.platform == "darwin":
        base = os.path.join(home, "Library", "Application Support")
    elif sys.platform == "win32":
        base = env.get("APPDATA") or os.path.join(home, "AppData", "Roaming")
    else:
        base = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return os.path.join(base, "Code", "User")


def tool_home(tool: str, config: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """The folder under which `tool` keeps its notes (config override, env override, default)."""
    paths = _section(config).get("paths")
    override = paths.get(tool) if isinstance(paths, dict) else None
    if isinstance(override, str) and override.strip():
        return _absolute(override.strip(), env)
    variable = _ENV_HOMES.get(tool)
    if variable and env.get(variable, "").strip():
        return _absolute(env[variable].strip(), env)
    if tool == "copilot-vscode":
        return _vscode_user_dir(env)
    return os.path.join(_user_home(env), _DOT_HOMES[tool])


def _absolute(path: str, env: Mapping[str, str]) -> str:
    if path == "~" or path.startswith("~/"):
        path = _user_home(env) + path[1:]
    return os.path.abspath(path)


def _section(config: Mapping[str, Any]) -> Mapping[str, Any]:
    section = config.get("agentMemories")
    return section if isinstance(section, dict) else {}


def selected_tools(config: Mapping[str, Any], env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The enabled tools, and warnings for unknown ids.

    HIPPO_AGENT_MEMORY_TOOLS (a comma list; `none` or empty of ids = off) wins over
    `agentMemories.tools` (`[]` = off); the default is all six. Unknown ids are ignored with a warning.
    """
    raw = env.get(TOOLS_ENV)
    if raw is not None and raw.strip():
        names = [part.strip().lower() for part in raw.split(",") if part.strip()]
        if names == ["none"]:
            return [], []
        origin = TOOLS_ENV
    else:
        configured = _section(config).get("tools", list(TOOLS))
        if not isinstance(configured, list):
            return list(TOOLS), ["agentMemories.tools must be a list of tool ids; using all six"]
        names = [str(name).strip().lower() for name in configured]
        origin = "agentMemories.tools"
    unknown = [name for name in names if name not in TOOLS and name != "none"]
    warnings = [f"{origin}: unknown agent tool {name!r} ignored" for name in unknown]
    chosen = [tool for tool in TOOLS if tool in names]
    return chosen, warnings
