"""The service installer on each platform's path, with the recording stand-in service managers, and
what the client reads to start an installed service (daemon.md §10.2, §14). Every path is a temp one."""

from __future__ import annotations

import json
import os
import plistlib
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from e2e.harness import FAKEBIN

from hippoctl.protocol import service_names
from hippoctl.protocol.replies_doctor import Check
from hippod.doctor.service import service_check
from hippod.integrations import installed, services
from hippod.integrations.service_state import ServiceState, query

UID = os.getuid()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A user with a temp HOME, the stand-ins first on PATH and their log in the temp folder."""
    home = tmp_path / "user"
    home.mkdir()
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"),
        "PATH": FAKEBIN + os.pathsep + os.environ.get("PATH", ""),
        "FAKEBIN_LOG": str(tmp_path / "calls.log"),
        "FAKEBIN_STATE": str(tmp_path / "manager"),
        "USERNAME": "ada",
    }


@pytest.fixture
def root(tmp_path: Path) -> str:
    folder = tmp_path / "hippo"
    folder.mkdir()
    return str(folder)


def calls(env: dict[str, str]) -> list[str]:
    path = Path(env["FAKEBIN_LOG"])
    return path.read_text().splitlines() if path.exists() else []


async def test_launchd_install_reinstall_and_uninstall(env: dict[str, str], root: str) -> None:
    agent = f"gui/{os.getuid()}/com.hippo.hippod"
    outcome = await services.install_service(global_root=root, env=env, platform="darwin")
    plist = Path(env["HOME"]) / "Library" / "LaunchAgents" / "com.hippo.hippod.plist"
    data = plistlib.loads(plist.read_bytes())
    assert data["ProgramArguments"][0] == sys.executable
    # launchd opens the log files itself, so their folder must exist.
    assert os.path.isdir(os.path.dirname(data["StandardErrorPath"]))
    assert outcome.report.lines[0] == "Installed per-user service com.hippo.hippod (launchd)"
    # The stand-in says the agent is loaded: its old definition is booted out first.
    assert calls(env) == [
        f"launchctl print {agent}",
        f"launchctl bootout {agent}",
        f"launchctl enable {agent}",
        f"launchctl bootstrap gui/{os.getuid()} {plist}",
    ]
    again = await services.install_service(global_root=root, env=env, platform="darwin")
    assert again.reply.files[0].state == "unchanged"
    assert calls(env)[4:] == [f"launchctl print {agent}", f"launchctl enable {agent}"]

    await services.uninstall_service(global_root=root, env=env)
    assert not plist.exists()
    assert calls(env)[6:] == [f"launchctl print {agent}", f"launchctl bootout {agent}"]
    assert installed.load(root) == []


async def test_windows_task_install_and_uninstall(env: dict[str, str], root: str) -> None:
    report = (await services.install_service(global_root=root, env=env, platform="win32")).report
    task = Path(root) / "integrations" / "hippod-task.xml"
    assert report.lines[0] == "Installed per-user service hippod (Task Scheduler)"
    raw = task.read_bytes()
    assert raw.startswith(b"\xff\xfe")
    assert b"\r\x00\n\x00" in raw  # CRLF line ends, as Windows tools write them
    assert ET.fromstring(raw).tag.endswith("}Task")
    assert calls(env) == [f"schtasks /Create /TN hippod /XML {task} /F", "schtasks /Run /TN hippod"]
    [record] = installed.load(root)
    assert (record.target, record.kind, record.file) == ("schtasks", "service", str(task))

    await services.uninstall_service(global_root=root, env=env)
    assert not task.exists()
    assert calls(env)[2:] == ["schtasks /Delete /TN hippod /F"]


async def test_socket_activation_elsewhere_is_a_warning(env: dict[str, str], root: str) -> None:
    outcome = await services.install_service(
        global_root=root, env=env, socket_activation=True, platform="darwin"
    )
    assert outcome.report.warnings == [
        "socket activation needs systemd; launchd starts hippod at login instead"
    ]
    assert outcome.failure is None


async def test_a_platform_without_a_service_manager_is_a_failure(env: dict[str, str], root: str) -> None:
    outcome = await services.install_service(global_root=root, env=env, platform="plan9")
    assert outcome.failure == "no per-user service manager hippod knows on plan9"
    assert not outcome.enabled
    assert calls(env) == [] and installed.load(root) == []


def doctor(
    env: dict[str, str],
    root: str,
    state: ServiceState | None,
    platform: str = "linux",
    python: str | None = None,
) -> list[Check]:
    """doctor's Service check as a daemon with pid 4242 would make it."""
    return service_check(global_root=root, env=env, state=state, pid=4242, platform=platform, python=python)


async def test_doctor_check_warns_until_installed(env: dict[str, str], root: str) -> None:
    [check] = doctor(env, root, None)
    assert (check.name, check.status, check.fix) == ("Service", "warn", "hippoctl daemon install-service")
    before = sorted(p for p in Path(env["HOME"]).rglob("*"))
    assert before == []  # read-only: it created nothing
    await services.install_service(global_root=root, env=env, socket_activation=True, platform="linux")
    state = await query("systemd", env, socket_activation=True)
    assert state == ServiceState("hippod.socket", enabled=True, enabled_as="enabled", running="inactive")
    [check] = doctor(env, root, state)
    unit_dir = Path(env["XDG_CONFIG_HOME"]) / "systemd" / "user"
    assert check.status == "ok" and check.fix is None
    assert check.message == (
        f"hippod.service (systemd --user) at {unit_dir / 'hippod.service'}, "
        f"socket activation through {unit_dir / 'hippod.socket'}, enabled; this hippod (pid 4242) was "
        "started by a client, not by systemd --user, which starts hippod from the next login"
    )


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
async def test_doctor_check_warns_when_the_service_starts_another_interpreter(
    env: dict[str, str], root: str, platform: str
) -> None:
    # As after hippod moved to a new virtualenv: the installed file still starts the old one.
    await services.install_service(global_root=root, env=env, platform=platform)
    state = await query(services.MANAGERS[platform], env)
    assert [c.status for c in doctor(env, root, state, platform)] == ["ok"]
    [check] = doctor(env, root, state, platform, python="/new/venv/bin/python")
    assert check.status == "warn" and "differs from what this hippod installs" in check.message
    assert check.fix == "hippoctl daemon install-service"


async def test_doctor_check_warns_on_a_unit_edited_by_hand(env: dict[str, str], root: str) -> None:
    await services.install_service(global_root=root, env=env, platform="linux")
    unit = Path(env["XDG_CONFIG_HOME"]) / "systemd" / "user" / "hippod.service"
    unit.write_text(unit.read_text().replace("Restart=on-failure", "Restart=no"))
    assert [c.status for c in doctor(env, root, await query("systemd", env))] == ["warn"]


def manager_says(env: dict[str, str], name: str, value: str) -> None:
    folder = Path(env["FAKEBIN_STATE"])
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(value + "\n")


async def test_what_launchd_and_the_task_scheduler_say(env: dict[str, str], root: str) -> None:
    await services.install_service(global_root=root, env=env, platform="darwin")
    assert await query("launchd", env) == ServiceState("com.hippo.hippod", enabled=True, running="active")
    manager_says(env, "launchd.state", "not running")
    assert (await query("launchd", env)).running == "inactive"
    await services.uninstall_service(global_root=root, env=env)
    state = await query("launchd", env)
    assert state == ServiceState("com.hippo.hippod", enabled=False, enabled_as="not loaded")

    await services.install_service(global_root=root, env=env, platform="win32")
    assert await query("schtasks", env) == ServiceState("hippod", enabled=True, running="inactive")
    manager_says(env, "schtasks.status", "Disabled")
    assert await query("schtasks", env) == ServiceState("hippod", enabled=False, enabled_as="disabled")
    [check] = doctor(env, root, await query("schtasks", env), "win32")
    assert check.status == "fail" and "hippod is installed but not enabled (disabled)" in check.message
    manager_says(env, "unreachable", "")
    state = await query("schtasks", env)
    assert state == ServiceState("hippod", unreachable="ERROR: The Task Scheduler service is not running.")
    [check] = doctor(env, root, state, "win32")
    assert check.status == "warn" and check.message == (
        "Task Scheduler cannot be reached (ERROR: The Task Scheduler service is not running.), so "
        "whether it is enabled and running is unknown"
    )


def write_records(root: str, records: list[dict[str, str]]) -> None:
    folder = Path(root) / "integrations"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "installed.json").write_text(json.dumps(records))


@pytest.mark.parametrize(
    ("names", "manager", "command"),
    [
        (["hippod.service"], "systemd", ["systemctl", "--user", "start", "--no-block", "hippod.service"]),
        (
            ["hippod.service", "hippod.socket"],
            "systemd",
            ["systemctl", "--user", "start", "--no-block", "hippod.socket"],
        ),
        (
            ["com.hippo.hippod.plist"],
            "launchd",
            ["launchctl", "kickstart", f"gui/{os.getuid()}/com.hippo.hippod"],
        ),
        (["hippod-task.xml"], "schtasks", ["schtasks", "/Run", "/TN", "hippod"]),
    ],
)
def test_client_start_command_follows_the_recorded_service(
    tmp_path: Path, root: str, names: list[str], manager: str, command: list[str]
) -> None:
    records = []
    for name in names:
        (tmp_path / name).write_text("x")
        records.append({"target": manager, "kind": "service", "file": str(tmp_path / name)})
    write_records(root, [{"target": "claude-code", "kind": "hook", "file": str(tmp_path)}, *records])
    assert service_names.start_command(root) == command


def test_client_start_command_needs_a_recorded_file_that_exists(tmp_path: Path, root: str) -> None:
    assert service_names.start_command(root) is None
    unit = tmp_path / "hippod.service"
    write_records(root, [{"target": "systemd", "kind": "service", "file": str(unit)}])
    assert service_names.start_command(root) is None  # recorded, but removed by hand since
    (Path(root) / "integrations" / "installed.json").write_text("{broken")
    unit.write_text("x")
    assert service_names.start_command(root) is None


async def test_back_from_socket_activation_without_a_user_bus(env: dict[str, str], root: str) -> None:
    await services.install_service(global_root=root, env=env, socket_activation=True, platform="linux")
    manager_says(env, "unreachable", "")
    outcome = await services.install_service(global_root=root, env=env, platform="linux")
    systemctl = "systemctl --user"
    assert calls(env)[-4:] == [
        f"{systemctl} disable --now hippod.socket",
        f"{systemctl} disable hippod.socket",
        f"{systemctl} daemon-reload",
        f"{systemctl} enable hippod.service",
    ]
    assert outcome.enabled
    assert outcome.failure is not None
    assert outcome.failure.startswith("hippod.service is enabled for the next login but not started: ")
    state = await query("systemd", env)
    assert (state.enabled, state.unreachable) == (True, "Failed to connect to bus: No medium found")
    assert (await query("systemd", env, socket_activation=True)).enabled is False
