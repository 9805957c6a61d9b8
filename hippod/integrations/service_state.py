"""Asking the service manager about the installed service: is it enabled, is it running, and can the
manager be reached at all (doctor's Service check; init and setup, before they install it again)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hippoctl.protocol import service_names as names
from hippoctl.protocol.service_names import launchd_domain
from hippod.integrations.service_commands import ask

# systemctl's `is-enabled` answers for a unit that starts at login; every other answer (disabled,
# masked, linked, ...) means it does not.
_ENABLED = frozenset({"enabled", "enabled-runtime"})
# systemctl's `is-active` answers; anything else on stdout is not an answer (e.g. an error).
_ACTIVE_STATES = frozenset(
    {"active", "reloading", "inactive", "failed", "activating", "deactivating", "maintenance", "refreshing"}
)


@dataclass(frozen=True, slots=True)
class ServiceState:
    """What the service manager says about one unit, agent or task; None where it could not tell.

    `enabled_as` is the manager's own word for a unit that is not enabled (`disabled`, `masked`,
    `not loaded`, ...); `running` is `active`, `inactive`, `failed` or a passing state such as
    `activating`; `unreachable` is why the manager could not be asked, in its own words.
    """

    unit: str
    enabled: bool | None = None
    enabled_as: str = ""
    running: str | None = None
    unreachable: str | None = None


async def query(manager: str, env: Mapping[str, str], *, socket_activation: bool = False) -> ServiceState:
    """Ask `manager` about hippod's service (its socket unit, with socket activation); read-only."""
    if manager == names.SYSTEMD:
        return await _systemd(names.SOCKET_UNIT if socket_activation else names.SERVICE_UNIT, env)
    if manager == names.LAUNCHD:
        return await _launchd(env)
    return await _task(env)


async def _systemd(unit: str, env: Mapping[str, str]) -> ServiceState:
    # `is-enabled` reads the unit files, so it answers even without a user bus; `is-active` cannot.
    command, out = await ask(["systemctl", "--user", "is-enabled", unit], env)
    word = out[0] if out else ""
    if word:
        enabled, enabled_as = word in _ENABLED, word
    elif "No such file" in (command.detail or ""):
        enabled, enabled_as = False, "not found"
    else:
        return ServiceState(unit, unreachable=command.detail)
    command, out = await ask(["systemctl", "--user", "is-active", unit], env)
    word = out[0] if out else ""
    if word in _ACTIVE_STATES:
        return ServiceState(unit, enabled, enabled_as, running=word)
    return ServiceState(unit, enabled, enabled_as, unreachable=command.detail or "no answer")


async def _launchd(env: Mapping[str, str]) -> ServiceState:
    label = names.LAUNCHD_LABEL
    command, out = await ask(["launchctl", "print", f"{launchd_domain()}/{label}"], env)
    if not command.ok:
        if "Could not find service" in (command.detail or ""):
            return ServiceState(label, enabled=False, enabled_as="not loaded")
        return ServiceState(label, unreachable=command.detail)
    state = next((line.partition("=")[2].strip() for line in out if line.startswith("state =")), "")
    return ServiceState(label, enabled=True, running="active" if state == "running" else "inactive")


async def _task(env: Mapping[str, str]) -> ServiceState:
    task = names.TASK_NAME
    command, out = await ask(["schtasks", "/Query", "/TN", task, "/FO", "LIST"], env)
    if not command.ok:
        if "cannot find" in (command.detail or ""):
            return ServiceState(task, enabled=False, enabled_as="not found")
        return ServiceState(task, unreachable=command.detail)
    status = next((line.partition(":")[2].strip() for line in out if line.startswith("Status:")), "")
    if status == "Disabled":
        return ServiceState(task, enabled=False, enabled_as="disabled")
    return ServiceState(task, enabled=True, running="active" if status == "Running" else "inactive")
