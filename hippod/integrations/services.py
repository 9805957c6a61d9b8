"""The per-user service that starts hippod at login (daemon.md §14).

Skeleton: the signatures are the contract `init`, `setup` and `doctor` rely on.
"""

from __future__ import annotations

from collections.abc import Mapping

from hippoctl.protocol.replies_doctor import Check
from hippod.integrations.report import Report


def is_installed(env: Mapping[str, str]) -> bool:
    """Whether this platform's unit, agent or task file is in place."""
    raise NotImplementedError


def service_name() -> str:
    """What init prints: `hippod.service`, `com.hippo.hippod` or the `hippod` task."""
    raise NotImplementedError


async def install(*, global_root: str, env: Mapping[str, str], socket_activation: bool = False) -> Report:
    """Render, write and enable the service; records every file in installed.json."""
    raise NotImplementedError


async def uninstall(*, global_root: str, env: Mapping[str, str]) -> Report:
    """Disable and remove exactly what installed.json records for the service."""
    raise NotImplementedError


def doctor_check(*, global_root: str, env: Mapping[str, str]) -> Check:
    """The Service check: warn when not installed."""
    raise NotImplementedError
