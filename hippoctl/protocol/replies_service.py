"""Replies of `daemon install-service` and `daemon uninstall-service` (daemon.md §14)."""

from __future__ import annotations

import msgspec


class ServiceFile(msgspec.Struct):
    """One service file and what happened to it: written, unchanged, removed or missing."""

    path: str
    state: str


class ServiceCommand(msgspec.Struct, omit_defaults=True):
    """One service-manager command run; detail says why it failed (its stderr line, not found, ...)."""

    command: list[str]
    ok: bool
    detail: str | None = None


class ServiceReply(msgspec.Struct):
    """manager: systemd, launchd or schtasks; name: the unit, agent label or task name."""

    manager: str
    name: str
    socket_activation: bool
    files: list[ServiceFile]
    commands: list[ServiceCommand]
