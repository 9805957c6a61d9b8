"""The Service check: the per-user service is installed as this hippod would write it, enabled, and
running (or this daemon runs outside it until the next login), as its service manager says."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from hippoctl.protocol import service_names as names
from hippoctl.protocol.replies_doctor import FAIL, WARN, Check
from hippoctl.protocol.service_names import launchd_domain
from hippod.doctor import Findings
from hippod.integrations import service_render as render
from hippod.integrations import services
from hippod.integrations.service_state import ServiceState

NAME = "Service"


def _logs(manager: str, unit: str) -> str:
    """Where the service manager tells why a unit stopped."""
    if manager == names.SYSTEMD:
        return f"journalctl --user -u {unit}"
    if manager == names.LAUNCHD:
        return f"launchctl print {launchd_domain()}/{unit}"
    return f"schtasks /Query /TN {unit} /V /FO LIST"


def service_check(
    *,
    global_root: str,
    env: Mapping[str, str],
    state: ServiceState | None,
    pid: int,
    platform: str | None = None,
    python: str | None = None,
) -> list[Check]:
    """Warn when no service is installed, or its file is not what install would write now (e.g. it
    starts an interpreter hippod no longer runs under), or its manager cannot be reached; fail when it
    is not enabled, or has failed. `state` is what the manager said (None: nothing was asked)."""
    manager = services.manager_for(platform)
    if manager is None:
        return [Check(NAME, WARN, "no per-user service manager on this platform")]
    described = services.DESCRIBED[manager]
    path = services.service_file(manager, global_root=global_root, env=env)
    if not os.path.isfile(path):
        message = f"no per-user service ({described}): hippod runs only once a client starts it"
        return [Check(NAME, WARN, message, services.FIX)]
    found = Findings(NAME)
    where = f"{services.NAMES[manager]} ({described}) at {path}"
    spec = render.ServiceSpec.from_env(env, python or sys.executable)
    with open(path, "rb") as handle:
        current = handle.read()
    if current != services.main_file_content(manager, spec):
        found.add(
            WARN,
            f"{where} differs from what this hippod installs (another interpreter, home or version, or "
            "edited by hand): the service may start the wrong hippod or none",
            services.FIX,
        )
    if manager == names.SYSTEMD and os.path.isfile(services.socket_file(env)):
        where += f", socket activation through {services.socket_file(env)}"
    if state is None:
        return found.checks(where)
    unit = state.unit
    if state.enabled is False:
        found.add(
            FAIL,
            f"{unit} is installed but not enabled ({state.enabled_as}): it does not start at login",
            services.FIX,
        )
    if state.unreachable is not None:
        known = "whether it is enabled and running" if state.enabled is None else "whether it runs"
        found.add(
            WARN,
            f"{described} cannot be reached ({state.unreachable}), so {known} is unknown",
            services.START_LATER
            if manager == names.SYSTEMD
            else f"once {described} answers: hippoctl doctor",
        )
    elif state.running == "failed":
        found.add(
            FAIL, f"{unit} has failed", f"see {_logs(manager, unit)}, then run: hippoctl daemon restart"
        )
    elif state.running not in (None, "active", "inactive", "reloading"):
        found.add(WARN, f"{unit} is {state.running}", f"if it stays so, see {_logs(manager, unit)}")
    if state.running == "inactive" and state.enabled:
        where += (
            f", enabled; this hippod (pid {pid}) was started by a client, not by {described}, "
            "which starts hippod from the next login"
        )
    elif state.enabled:
        where += f", enabled and {state.running}"
    return found.checks(where)
