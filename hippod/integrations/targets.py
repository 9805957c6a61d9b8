"""The agent hosts hippod wires, and the one entry point per action on them (integrations.md §1, §3-§8).

Skeleton: the signatures are the contract `init`, `setup`, `hook` and `doctor` rely on.
"""

from __future__ import annotations

from collections.abc import Mapping

from hippoctl.protocol.messages import HOOK_TARGETS as TARGETS
from hippoctl.protocol.replies_doctor import Check
from hippod.integrations.report import Report

__all__ = ["TARGETS"]


def detect(project: str) -> list[str]:
    """The targets detected in a project folder, by integrations.md §1's table, in TARGETS order."""
    raise NotImplementedError


def install_project(target: str, project: str, *, global_root: str) -> Report:
    """The target's instruction block in the project's CLAUDE.md or AGENTS.md, only if that file exists."""
    raise NotImplementedError


def install_user(target: str, command: str, *, global_root: str, env: Mapping[str, str]) -> Report:
    """The target's machine-level wiring: Claude Code's 7 entries, Codex's 2 (when its home exists), the
    OpenCode plugin; nothing for the AGENTS.md-only targets. `command` prefixes every hook command."""
    raise NotImplementedError


def user_home_exists(target: str, env: Mapping[str, str]) -> bool:
    """Whether the target's user-level home exists (setup wires only those)."""
    raise NotImplementedError


def refresh_blocks(project: str, *, global_root: str) -> Report:
    """Replace unedited older blocks in a project's CLAUDE.md / AGENTS.md with the current ones."""
    raise NotImplementedError


def doctor_checks(
    project: str | None, command: str, *, global_root: str, env: Mapping[str, str]
) -> list[Check]:
    """Claude Code, Codex, OpenCode and Blocks checks of integrations.md §12 (read-only)."""
    raise NotImplementedError
