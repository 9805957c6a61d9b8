"""`daemon install-service` / `uninstall-service` against a real daemon and recording service managers
(daemon.md §14), and the client asking the service manager first (§10.2)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippod.integrations import files

if TYPE_CHECKING:
    from e2e.harness import Hippo

SYSTEMCTL = "systemctl --user"


def unit_dir(hippo: Hippo) -> Path:
    return Path(hippo.env["XDG_CONFIG_HOME"]) / "systemd" / "user"


def service_records(hippo: Hippo) -> list[dict[str, Any]]:
    path = Path(hippo.home) / "integrations" / "installed.json"
    records: list[dict[str, Any]] = json.loads(path.read_text()) if path.exists() else []
    return [r for r in records if r["kind"] == "service"]


def tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file below `folder` with its inode and modification time: a rewrite changes one of them."""
    return {
        str(p.relative_to(folder)): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_install_writes_records_and_enables_the_unit_and_reinstall_changes_nothing(hippo: Hippo) -> None:
    hippo.start()
    done = hippo.ok("daemon", "install-service")
    service = unit_dir(hippo) / "hippod.service"
    assert done.stdout.splitlines()[0] == "Installed per-user service hippod.service (systemd --user)"
    assert done.stderr == ""
    assert sorted(os.listdir(unit_dir(hippo))) == ["hippod.service"]
    text = service.read_text()
    assert f"ExecStart={sys.executable} -m hippod run --foreground" in text.splitlines()
    assert f"Environment=HIPPO_HOME={os.path.realpath(hippo.home)}" in text.splitlines()
    assert f"Environment=HIPPO_SOCKET={hippo.socket}" in text.splitlines()
    assert hippo.service_calls() == [f"{SYSTEMCTL} daemon-reload", f"{SYSTEMCTL} enable --now hippod.service"]
    [record] = service_records(hippo)
    assert (record["target"], record["file"]) == ("systemd", str(service))
    assert record["digest"].startswith("sha256:")

    # Again: the same files, untouched on disk (installed.json too), and the unit is enabled again.
    before = tree(Path(hippo.root) / "config") | tree(Path(hippo.home) / "integrations")
    data = hippo.json("daemon", "install-service")
    assert tree(Path(hippo.root) / "config") | tree(Path(hippo.home) / "integrations") == before
    assert data["files"] == [{"path": str(service), "state": "unchanged"}]
    assert data["manager"] == "systemd" and data["name"] == "hippod.service"
    assert [c["ok"] for c in data["commands"]] == [True, True]
    assert hippo.service_calls()[2:] == hippo.service_calls()[:2]

    # Uninstall: exactly the recorded file goes, the unit is disabled and systemd reloaded.
    (unit_dir(hippo) / "user-own.service").write_text("[Service]\nExecStart=/bin/true\n")
    done = hippo.ok("daemon", "uninstall-service")
    assert done.stdout.splitlines()[0] == "Removed per-user service hippod.service (systemd --user)"
    assert sorted(os.listdir(unit_dir(hippo))) == ["user-own.service"]
    assert hippo.service_calls()[4:] == [
        f"{SYSTEMCTL} disable --now --no-block hippod.service",
        f"{SYSTEMCTL} daemon-reload",
    ]
    assert service_records(hippo) == []

    done = hippo.ok("daemon", "uninstall-service")
    assert "nothing to remove" in done.stdout
    assert len(hippo.service_calls()) == 6


def test_socket_activation_installs_and_enables_the_socket_and_switches_back(hippo: Hippo) -> None:
    pid = hippo.start()
    hippo.ok("daemon", "install-service")
    data = hippo.json("daemon", "install-service", "--socket-activation")
    socket_unit = unit_dir(hippo) / "hippod.socket"
    # The socket is enabled, not started (systemd refuses while hippod.service runs, and it would
    # take the path from this daemon): the daemon hands over and stops.
    assert hippo.wait_for(lambda: not hippo.pid_alive(pid), timeout=40)
    assert data["socket_activation"] is True
    assert [f["path"] for f in data["files"]] == [str(unit_dir(hippo) / "hippod.service"), str(socket_unit)]
    lines = socket_unit.read_text().splitlines()
    assert f"ListenStream={hippo.socket}" in lines
    assert "SocketMode=0600" in lines and "DirectoryMode=0700" in lines
    # The service was enabled on its own before: now the socket starts it.
    assert hippo.service_calls()[2:] == [
        f"{SYSTEMCTL} daemon-reload",
        f"{SYSTEMCTL} disable hippod.service",
        f"{SYSTEMCTL} enable hippod.socket",
    ]
    assert sorted(Path(r["file"]).name for r in service_records(hippo)) == ["hippod.service", "hippod.socket"]

    # Back to a plain service: the socket unit is disabled and removed. (The stand-in systemctl
    # starts nothing, so the client spawns the daemon after asking it.)
    done = hippo.ok("daemon", "install-service")
    assert not socket_unit.exists()
    assert hippo.service_calls()[5:] == [
        f"{SYSTEMCTL} start --no-block hippod.socket",
        f"{SYSTEMCTL} disable --now hippod.socket",
        f"{SYSTEMCTL} daemon-reload",
        f"{SYSTEMCTL} enable --now hippod.service",
    ]
    assert "Removed " + str(socket_unit) in done.stdout
    assert [Path(r["file"]).name for r in service_records(hippo)] == ["hippod.service"]


def test_uninstall_after_socket_activation_disables_both_units(hippo: Hippo) -> None:
    pid = hippo.start()
    done = hippo.ok("daemon", "install-service", "--socket-activation")
    assert done.stdout.splitlines()[-1] == (
        "   hippod stops now; hippod.socket starts it again on the next connection"
    )
    assert hippo.service_calls() == [f"{SYSTEMCTL} daemon-reload", f"{SYSTEMCTL} enable hippod.socket"]
    assert hippo.wait_for(lambda: not hippo.pid_alive(pid), timeout=40)
    hippo.ok("daemon", "uninstall-service")
    assert os.listdir(unit_dir(hippo)) == []
    assert hippo.service_calls()[2:] == [
        f"{SYSTEMCTL} start --no-block hippod.socket",
        f"{SYSTEMCTL} disable --now --no-block hippod.socket hippod.service",
        f"{SYSTEMCTL} daemon-reload",
    ]


def fake_state(hippo: Hippo, name: str) -> str:
    """What the stand-in systemctl recorded of a unit, e.g. `hippod.service.enabled`."""
    return (Path(hippo.env["FAKEBIN_STATE"]) / name).read_text().strip()


def test_without_a_user_bus_the_unit_is_enabled_for_the_next_login_and_install_exits_1(hippo: Hippo) -> None:
    hippo.start()
    hippo.service_manager(reachable=False)
    done = hippo.ctl("daemon", "install-service")
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout.splitlines()[0] == (
        "Installed per-user service hippod.service (systemd --user), enabled for the next login but not "
        "started"
    )
    # One line: what did not happen, the manager's own words, and what to do.
    assert done.stderr == (
        "hippod.service is enabled for the next login but not started: systemd --user cannot be reached "
        "(Failed to connect to bus: No medium found); until then hippod runs when a client starts it, or "
        "start the service now with: hippoctl daemon restart from a session where `systemctl --user "
        "status` works\n"
    )
    assert (unit_dir(hippo) / "hippod.service").is_file()
    assert len(service_records(hippo)) == 1
    # systemctl enables a unit on its files alone, without the bus: it starts at the next login.
    assert hippo.service_calls() == [f"{SYSTEMCTL} daemon-reload", f"{SYSTEMCTL} enable hippod.service"]
    assert fake_state(hippo, "hippod.service.enabled") == "enabled"
    data = json.loads(hippo.ctl("--json", "daemon", "install-service").stdout)
    assert [c["ok"] for c in data["commands"]] == [False, True]
    assert data["commands"][0]["detail"] == "Failed to connect to bus: No medium found"

    # Uninstalling without the bus: the unit files go and the unit is disabled, but nothing is stopped.
    done = hippo.ctl("daemon", "uninstall-service")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "disabled but not stopped" in done.stderr, done.stderr
    assert not (unit_dir(hippo) / "hippod.service").exists()
    assert fake_state(hippo, "hippod.service.enabled") == "disabled"


def test_a_failing_service_manager_exits_1_with_one_line_and_the_files_stay(hippo: Hippo) -> None:
    hippo.start(env=hippo.daemon_env(FAKEBIN_EXIT="1"))
    done = hippo.ctl("daemon", "install-service")
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0] == (
        "Wrote per-user service hippod.service (systemd --user), but could not enable it"
    )
    assert done.stderr == (
        f"hippod.service is written but not enabled: `{SYSTEMCTL} daemon-reload` failed (exit status 1); "
        "fix that, then run: hippoctl daemon install-service\n"
    )
    assert (unit_dir(hippo) / "hippod.service").is_file()
    assert len(service_records(hippo)) == 1
    assert hippo.service_calls() == [f"{SYSTEMCTL} daemon-reload"]


def test_a_missing_systemctl_exits_1(hippo: Hippo, tmp_path: Path) -> None:
    hippo.start(env=hippo.daemon_env(PATH=str(tmp_path)))
    done = hippo.ctl("daemon", "install-service")
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1
    assert f"`{SYSTEMCTL} daemon-reload` failed (systemctl not found)" in done.stderr
    assert (unit_dir(hippo) / "hippod.service").is_file()


def test_an_edited_unit_is_removed_with_a_copy_kept(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("daemon", "install-service")
    service = unit_dir(hippo) / "hippod.service"
    service.write_text(service.read_text() + "Nice=5\n")
    done = hippo.ok("daemon", "uninstall-service")
    assert not service.exists()
    backups = Path(hippo.home, files.BACKUPS_DIR)
    [(name, original)] = json.loads((backups / files.INDEX_NAME).read_text()).items()
    backup = backups / name
    assert original == str(service)
    assert backup.read_text().endswith("Nice=5\n")
    assert not list(unit_dir(hippo).glob("*.hippo-bak"))
    assert f"a copy stays at {backup}" in done.stdout


def test_a_unit_this_home_did_not_install_is_left_alone(hippo: Hippo) -> None:
    hippo.start()
    service = unit_dir(hippo) / "hippod.service"
    service.parent.mkdir(parents=True)
    service.write_text("[Service]\nExecStart=/bin/true\n")
    done = hippo.ok("daemon", "uninstall-service")
    assert service.read_text() == "[Service]\nExecStart=/bin/true\n"
    assert "was not installed by this hippo home; left alone" in done.stderr
    assert hippo.service_calls() == []


def test_client_asks_the_service_manager_first_then_spawns(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("daemon", "install-service")
    hippo.ok("daemon", "stop")
    calls = len(hippo.service_calls())
    started = time.monotonic()
    # The stand-in systemctl accepts the start but starts nothing: the client spawns after ~1 s.
    done = hippo.ctl("status", timeout=60)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started >= 1.0
    assert hippo.service_calls()[calls:] == [f"{SYSTEMCTL} start --no-block hippod.service"]
    assert hippo.pid_alive(hippo.json("daemon", "status")["pid"])


def test_client_spawns_at_once_when_the_service_manager_fails(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("daemon", "install-service", "--socket-activation")
    hippo.ok("daemon", "stop")
    calls = len(hippo.service_calls())
    done = hippo.ctl("status", env=hippo.daemon_env(FAKEBIN_EXIT="1"), timeout=60)
    assert done.returncode == 0, done.stderr
    assert hippo.service_calls()[calls:] == [f"{SYSTEMCTL} start --no-block hippod.socket"]
    assert hippo.pid_alive(hippo.json("daemon", "status")["pid"])


def test_client_without_an_installed_service_never_calls_the_service_manager(hippo: Hippo) -> None:
    done = hippo.ctl("status", timeout=60)
    assert done.returncode == 0, done.stderr
    assert hippo.service_calls() == []


def test_usage_errors(hippo: Hippo) -> None:
    done = hippo.ctl("daemon", "uninstall-service", "--socket-activation")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_the_task_s_env_arguments_set_the_daemon_s_home(hippo: Hippo) -> None:
    # A Windows task has no environment of its own: HIPPO_HOME reaches the daemon as an argument.
    proc = hippo.spawn("--env", f"HIPPO_HOME={hippo.home}", env=hippo.daemon_env(HIPPO_HOME=None))
    assert hippo.wait_for(lambda: hippo.answers() == proc.pid, timeout=30), hippo.output(proc)
    assert hippo.json("daemon", "status")["home"] == hippo.home
