"""The per-user service that starts hippod at login (daemon.md §14).

`init` and `setup` call `service_name` and `ensure`; the `daemon install-service` / `uninstall-service`
handler calls `install_service` / `uninstall_service`, which also say file by file and command by
command what happened, and in one line what failed. doctor's Service check is in hippod/doctor/service.py.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from hippoctl.protocol import service_names as names
from hippoctl.protocol.paths import home_override
from hippoctl.protocol.replies_service import ServiceCommand, ServiceFile, ServiceReply
from hippoctl.protocol.service_names import launchd_domain
from hippod.integrations import files, homes, installed
from hippod.integrations import service_render as render
from hippod.integrations.report import Report
from hippod.integrations.service_commands import run, run_all, run_systemctl, show, unreachable
from hippod.integrations.service_state import ServiceState, query

MANAGERS = {"linux": names.SYSTEMD, "darwin": names.LAUNCHD, "win32": names.SCHTASKS}
NAMES = {names.SYSTEMD: names.SERVICE_UNIT, names.LAUNCHD: names.LAUNCHD_LABEL, names.SCHTASKS: "hippod"}
DESCRIBED = {names.SYSTEMD: "systemd --user", names.LAUNCHD: "launchd", names.SCHTASKS: "Task Scheduler"}
FIX = "hippoctl daemon install-service"
# How to start a service systemd --user could not be reached to start (daemon.md §10.2: the client
# starts an installed service through the service manager, from the user's own session).
START_LATER = "hippoctl daemon restart from a session where `systemctl --user status` works"
STATES = {"written": "Wrote", "unchanged": "Unchanged", "removed": "Removed", "missing": "Already gone:"}


@dataclass
class Outcome:
    """What an install or uninstall did: the reply's data, the lines and warnings to print, and the
    one line saying what failed and what to do (None when everything worked)."""

    reply: ServiceReply
    report: Report = field(default_factory=Report)
    failure: str | None = None

    @property
    def enabled(self) -> bool:
        """Whether the service starts at the next login: every command went through, or systemd
        --user could not be reached but the unit was enabled on its files alone."""
        commands = self.reply.commands
        return bool(commands) and (all(c.ok for c in commands) or _offline(commands) is not None)


def manager_for(platform: str | None = None) -> str | None:
    """The service manager of this (or the given) platform, or None where hippod knows none."""
    return MANAGERS.get(platform or homes.platform())


def service_name() -> str:
    """What init prints: `hippod.service`, `com.hippo.hippod` or the `hippod` task."""
    manager = manager_for()
    if manager == names.SCHTASKS:
        return "hippod (logon task)"
    return NAMES.get(manager or "", names.SERVICE_UNIT)


def _global_root(env: Mapping[str, str]) -> str:
    from hippod.store.roots import global_root

    return home_override(env) or global_root()


def service_file(manager: str, *, global_root: str, env: Mapping[str, str]) -> str:
    """Where the manager's main file goes: the service unit, the agent plist or the task XML."""
    if manager == names.SYSTEMD:
        return os.path.join(homes.systemd_user_dir(env), names.SERVICE_UNIT)
    if manager == names.LAUNCHD:
        return os.path.join(homes.launch_agents_dir(env), names.LAUNCHD_LABEL + ".plist")
    return os.path.join(global_root, "integrations", names.TASK_FILE)


def socket_file(env: Mapping[str, str]) -> str:
    return os.path.join(homes.systemd_user_dir(env), names.SOCKET_UNIT)


def is_installed(env: Mapping[str, str]) -> bool:
    """Whether this platform's unit, agent or task file is in place."""
    manager = manager_for()
    if manager is None:
        return False
    return os.path.isfile(service_file(manager, global_root=_global_root(env), env=env))


def main_file_content(manager: str, spec: render.ServiceSpec) -> bytes:
    """The bytes install writes into the manager's main file (the unit, the plist, the task XML)."""
    if manager == names.SYSTEMD:
        return render.render_systemd_service(spec).encode()
    if manager == names.LAUNCHD:
        return render.render_launchd(spec)
    return render.task_bytes(render.render_task_xml(spec))


def _digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _records(global_root: str) -> list[installed.Record]:
    return [r for r in installed.load(global_root) if r.kind == names.KIND]


def _put(path: str, content: bytes, manager: str, global_root: str) -> ServiceFile:
    """Write one service file unless it already holds exactly this, and record it."""
    state = "unchanged" if _read(path) == content else "written"
    if state == "written":
        files.write_atomic(path, content)
    digest = _digest(content)
    record = installed.Record(target=manager, kind=names.KIND, file=path, digest=digest)
    if not any((r.file, r.target, r.digest) == (path, manager, digest) for r in _records(global_root)):
        installed.add(global_root, record)
    return ServiceFile(path=path, state=state)


def _remove(record: installed.Record, global_root: str, report: Report) -> ServiceFile:
    """Delete one recorded file (a copy is kept if someone edited it since) and drop its record."""
    current = _read(record.file)
    state = "missing"
    if current is not None:
        state = "removed"
        if record.digest is not None and _digest(current) != record.digest:
            # Edited since hippod wrote it: the edits are kept in a copy, unless a copy already exists.
            backup = files.backup_once(record.file)
            if backup is not None:
                report.lines.append(f"   {record.file} was edited since install; a copy stays at {backup}")
        os.unlink(record.file)
    installed.remove(global_root, lambda r: r.kind == names.KIND and r.file == record.file)
    return ServiceFile(path=record.file, state=state)


# --- install ------------------------------------------------------------------------------------------


async def install_service(
    *,
    global_root: str,
    env: Mapping[str, str],
    socket_activation: bool = False,
    platform: str | None = None,
    python: str | None = None,
) -> Outcome:
    """Render, write and enable the service for this platform; records every file in installed.json."""
    manager = manager_for(platform)
    spec = render.ServiceSpec.from_env(env, python or sys.executable)
    if manager == names.SYSTEMD:
        outcome = await _install_systemd(spec, global_root, env, socket_activation)
    elif manager == names.LAUNCHD:
        outcome = await _install_launchd(spec, global_root, env)
    elif manager == names.SCHTASKS:
        outcome = await _install_task(spec, global_root, env)
    else:
        reply = ServiceReply(manager="", name="", socket_activation=False, files=[], commands=[])
        text = f"no per-user service manager hippod knows on {platform or homes.platform()}"
        return Outcome(reply, failure=text)
    if socket_activation and manager != names.SYSTEMD:
        note = f"socket activation needs systemd; {DESCRIBED[manager]} starts hippod at login instead"
        outcome.report.warnings.append(note)
    _summarise(outcome, "Installed")
    return outcome


def _offline(commands: list[ServiceCommand]) -> ServiceCommand | None:
    """The first failure, when every failure found systemd --user unreachable and the steps after
    each went through on the unit files alone (see run_systemctl); None otherwise."""
    failures = [c for c in commands if not c.ok]
    if not failures or not all(unreachable(c) for c in failures) or not commands[-1].ok:
        return None
    return failures[0]


def _failure(reply: ServiceReply, verb: str) -> str | None:
    """One line: what did not happen, why (the command and its own words), and what to do."""
    failed = next((c for c in reply.commands if not c.ok), None)
    if failed is None:
        return None
    unit = names.SOCKET_UNIT if reply.socket_activation else NAMES[reply.manager]
    offline = _offline(reply.commands)
    if verb == "Installed":
        if offline is not None:
            return (
                f"{unit} is enabled for the next login but not started: {DESCRIBED[reply.manager]} cannot "
                f"be reached ({offline.detail}); until then hippod runs when a client starts it, or start "
                f"the service now with: {START_LATER}"
            )
        return (
            f"{unit} is written but not enabled: `{show(failed.command)}` failed ({failed.detail}); "
            f"fix that, then run: {FIX}"
        )
    if offline is not None:
        return (
            f"{unit} is removed and disabled but not stopped: {DESCRIBED[reply.manager]} cannot be "
            f"reached ({offline.detail}); a hippod it started stops at the next logout"
        )
    return f"{unit} is removed, but `{show(failed.command)}` failed ({failed.detail})"


def _summarise(outcome: Outcome, verb: str) -> None:
    reply = outcome.reply
    title = f"per-user service {NAMES[reply.manager]} ({DESCRIBED[reply.manager]})"
    if reply.socket_activation:
        title += f" with socket activation ({names.SOCKET_UNIT})"
    failed = any(not c.ok for c in reply.commands)
    offline = _offline(reply.commands) is not None
    if verb == "Installed":
        changed = any(f.state in ("written", "removed") for f in reply.files)
        if offline:
            head = f"{'Installed' if changed else 'Kept'} {title}, enabled for the next login but not started"
        elif failed:
            head = f"{'Wrote' if changed else 'Kept'} {title}, but could not enable it"
        else:
            head = f"{'Installed' if changed else 'Already installed:'} {title}"
    elif not reply.files:
        head = "No per-user service is recorded as installed; nothing to remove"
    else:
        head = f"Removed {title}" + (", but could not disable it" if failed and not offline else "")
    details = [f"   {STATES[f.state]} {f.path}" for f in reply.files]
    details += [f"   Ran {show(c.command)}" for c in reply.commands if c.ok]
    outcome.report.lines[:0] = [head, *details]
    outcome.failure = _failure(reply, verb)


async def _install_systemd(
    spec: render.ServiceSpec, global_root: str, env: Mapping[str, str], socket_activation: bool
) -> Outcome:
    report = Report()
    systemctl = ["systemctl", "--user"]
    recorded = {r.file for r in _records(global_root)}
    service, sock = service_file(names.SYSTEMD, global_root=global_root, env=env), socket_file(env)
    commands: list[ServiceCommand] = []
    written: list[ServiceFile] = []
    if not socket_activation and sock in recorded:
        # Back from socket activation: the socket unit goes, the service is enabled on its own.
        commands += await run_systemctl([[*systemctl, "disable", "--now", names.SOCKET_UNIT]], env)
        written += [_remove(r, global_root, report) for r in _records(global_root) if r.file == sock]
    written.append(_put(service, main_file_content(names.SYSTEMD, spec), names.SYSTEMD, global_root))
    steps = [[*systemctl, "daemon-reload"]]
    if socket_activation:
        written.append(_put(sock, render.render_systemd_socket(spec).encode(), names.SYSTEMD, global_root))
        if service in recorded and sock not in recorded:
            # The service was enabled on its own before; now the socket starts it.
            steps.append([*systemctl, "disable", names.SERVICE_UNIT])
    if socket_activation:
        # Enabled, not started: systemd refuses to start a socket while its service runs, and a
        # started socket takes the path from the daemon running this request. That daemon hands
        # over instead (handlers/service.py): it stops, and the next client starts the socket.
        steps.append([*systemctl, "enable", names.SOCKET_UNIT])
    else:
        steps.append([*systemctl, "enable", "--now", names.SERVICE_UNIT])
    if all(c.ok for c in commands) or _offline(commands) is not None:
        commands += await run_systemctl(steps, env)
    reply = ServiceReply(names.SYSTEMD, names.SERVICE_UNIT, socket_activation, written, commands)
    return Outcome(reply, report)


async def _launchd_loaded(domain: str, env: Mapping[str, str]) -> bool:
    return (await run(["launchctl", "print", f"{domain}/{names.LAUNCHD_LABEL}"], env)).ok


async def _install_launchd(spec: render.ServiceSpec, global_root: str, env: Mapping[str, str]) -> Outcome:
    report = Report()
    # launchd opens the log files itself, before the daemon could create their folder.
    os.makedirs(spec.log_dir, mode=0o700, exist_ok=True)
    plist = service_file(names.LAUNCHD, global_root=global_root, env=env)
    written = _put(plist, main_file_content(names.LAUNCHD, spec), names.LAUNCHD, global_root)
    domain = launchd_domain()
    target = f"{domain}/{names.LAUNCHD_LABEL}"
    loaded = await _launchd_loaded(domain, env)
    steps: list[list[str]] = []
    if loaded and written.state == "written":
        # A loaded agent keeps its old definition until it is booted out.
        steps.append(["launchctl", "bootout", target])
    steps.append(["launchctl", "enable", target])
    if not loaded or written.state == "written":
        steps.append(["launchctl", "bootstrap", domain, plist])
    commands = await run_all(steps, env)
    reply = ServiceReply(names.LAUNCHD, names.LAUNCHD_LABEL, False, [written], commands)
    return Outcome(reply, report)


async def _install_task(spec: render.ServiceSpec, global_root: str, env: Mapping[str, str]) -> Outcome:
    report = Report()
    xml = service_file(names.SCHTASKS, global_root=global_root, env=env)
    written = _put(xml, main_file_content(names.SCHTASKS, spec), names.SCHTASKS, global_root)
    steps = [
        ["schtasks", "/Create", "/TN", names.TASK_NAME, "/XML", xml, "/F"],
        ["schtasks", "/Run", "/TN", names.TASK_NAME],
    ]
    commands = await run_all(steps, env)
    reply = ServiceReply(names.SCHTASKS, names.TASK_NAME, False, [written], commands)
    return Outcome(reply, report)


def _socket_activated(manager: str, env: Mapping[str, str]) -> bool:
    return manager == names.SYSTEMD and os.path.isfile(socket_file(env))


async def state(env: Mapping[str, str]) -> ServiceState | None:
    """What the service manager says of the installed service (read-only); None when none is installed."""
    manager = manager_for()
    if manager is None or not is_installed(env):
        return None
    return await query(manager, env, socket_activation=_socket_activated(manager, env))


async def ensure(*, global_root: str, env: Mapping[str, str]) -> Outcome | None:
    """For init and setup: install the service unless it is installed and enabled already (then None).

    An installed service the manager reports as not enabled (a failed earlier install, or disabled
    since) is installed again, with socket activation if it had it.
    """
    found = await state(env)
    if found is not None and found.enabled is not False:
        return None
    manager = manager_for()
    sockets = manager is not None and _socket_activated(manager, env)
    return await install_service(global_root=global_root, env=env, socket_activation=sockets)


# --- uninstall ----------------------------------------------------------------------------------------


def _stop_commands(manager: str, recorded: list[installed.Record], env: Mapping[str, str]) -> list[list[str]]:
    if manager == names.SYSTEMD:
        units = sorted({os.path.basename(r.file) for r in recorded}, reverse=True)  # the socket first
        # --no-block: the daemon being stopped may be the one running this very request.
        return [["systemctl", "--user", "disable", "--now", "--no-block", *units]]
    if manager == names.SCHTASKS:
        return [["schtasks", "/Delete", "/TN", names.TASK_NAME, "/F"]]
    return []


async def uninstall_service(*, global_root: str, env: Mapping[str, str]) -> Outcome:
    """Disable and remove exactly what installed.json records for the service."""
    report = Report()
    records = _records(global_root)
    managers = list(dict.fromkeys(r.target for r in records))
    commands: list[ServiceCommand] = []
    removed: list[ServiceFile] = []
    for manager in managers:
        mine = [r for r in records if r.target == manager]
        steps = _stop_commands(manager, mine, env)
        if manager == names.LAUNCHD:
            target = f"{launchd_domain()}/{names.LAUNCHD_LABEL}"
            if await _launchd_loaded(launchd_domain(), env):
                steps.append(["launchctl", "bootout", target])
        done = await (run_systemctl(steps, env) if manager == names.SYSTEMD else run_all(steps, env))
        commands += done
        removed += [_remove(r, global_root, report) for r in mine]
        if manager == names.SYSTEMD and all(c.ok for c in done):
            commands += await run_all([["systemctl", "--user", "daemon-reload"]], env)
    manager = managers[0] if managers else (manager_for() or names.SYSTEMD)
    if not managers:
        unrecorded = service_file(manager, global_root=global_root, env=env)
        if os.path.isfile(unrecorded):
            report.warnings.append(f"{unrecorded} was not installed by this hippo home; left alone")
    socket_activation = any(os.path.basename(f.path) == names.SOCKET_UNIT for f in removed)
    reply = ServiceReply(manager, NAMES[manager], socket_activation, removed, commands)
    outcome = Outcome(reply, report)
    _summarise(outcome, "Removed")
    return outcome
