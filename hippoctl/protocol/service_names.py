"""The per-user service's names, and how the client asks a service manager to start it (daemon.md §10.2, §14).

Standard library only: the client reads this when no daemon answers, and the daemon names the same
units, agent and task when it installs them.
"""

from __future__ import annotations

import json
import os
import sys

SYSTEMD = "systemd"
LAUNCHD = "launchd"
SCHTASKS = "schtasks"

SERVICE_UNIT = "hippod.service"
SOCKET_UNIT = "hippod.socket"
LAUNCHD_LABEL = "com.hippo.hippod"
TASK_NAME = "hippod"
TASK_FILE = "hippod-task.xml"

# installed.json's `kind` for every file of the service.
KIND = "service"


def installed_json(global_root: str) -> str:
    return os.path.join(global_root, "integrations", "installed.json")


def installed_files(global_root: str) -> dict[str, str]:
    """{file: manager} for the service files this instance's installed.json records and that still exist.

    Reading the record rather than probing the usual unit paths ties the answer to this instance:
    a daemon with its own HIPPO_HOME never starts the service installed for another home.
    """
    try:
        with open(installed_json(global_root), encoding="utf-8") as handle:
            records = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(records, list):
        return {}
    found: dict[str, str] = {}
    for record in records:
        if not isinstance(record, dict) or record.get("kind") != KIND:
            continue
        path, manager = record.get("file"), record.get("target")
        if isinstance(path, str) and isinstance(manager, str) and os.path.isfile(path):
            found[path] = manager
    return found


def start_command(global_root: str) -> list[str] | None:
    """The service manager's start command for this instance's installed service, or None when none is.

    With socket activation the socket unit is started: the first connection then starts the daemon.
    """
    files = installed_files(global_root)
    managers = set(files.values())
    if SYSTEMD in managers:
        names = {os.path.basename(path) for path, manager in files.items() if manager == SYSTEMD}
        unit = SOCKET_UNIT if SOCKET_UNIT in names else SERVICE_UNIT
        return ["systemctl", "--user", "start", "--no-block", unit]
    if LAUNCHD in managers:
        return ["launchctl", "kickstart", f"{launchd_domain()}/{LAUNCHD_LABEL}"]
    if SCHTASKS in managers:
        return ["schtasks", "/Run", "/TN", TASK_NAME]
    return None


def launchd_domain() -> str:
    """launchd's domain of this user's agents, `gui/<uid>` (macOS; no uid on Windows)."""
    if sys.platform == "win32":
        raise RuntimeError("launchd runs on macOS only")
    return f"gui/{os.getuid()}"
