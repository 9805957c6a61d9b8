"""End-to-end: `hippoctl doctor [--json]` and `support-bundle` against a real daemon (integrations.md §12)."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippoctl.protocol.replies_doctor import DAEMON_CHECKS

if TYPE_CHECKING:
    from e2e.harness import Hippo

# The checks this module owns; the Service and agent checks come from the integrations' own code.
OTHERS = ("Service", "Claude Code", "Codex", "Codex trust", "OpenCode", "Hook commands", "Blocks")
OWN_CHECKS = ("Python", "Daemon", "Socket", *(n for n in DAEMON_CHECKS if n not in OTHERS))
MARKER = "ZEBRA-QUINCE-7731 lives in the memory text only"


def project(hippo: Hippo, name: str = "proj") -> str:
    folder = os.path.join(hippo.root, name)
    os.makedirs(folder)
    hippo.ok("init", "--no-hooks", "--no-schedule", "--no-learn", cwd=folder)
    return os.path.realpath(folder)


def doctor_json(hippo: Hippo, cwd: str | None = None) -> tuple[int, dict[str, Any]]:
    done = hippo.ctl("--json", "doctor", cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, document


def by_name(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in document["checks"]}


def assert_exit_rule(code: int, document: dict[str, Any]) -> None:
    """Exit 1 exactly when a check failed; `ok` says the same."""
    failing = [c for c in document["checks"] if c["status"] == "fail"]
    assert code == (1 if failing else 0), failing
    assert document["ok"] is (not failing)


def db_files(*roots: str) -> dict[str, tuple[str, int]]:
    """sha256 and mtime of every hippo.db under the roots."""
    found = {}
    for root in roots:
        for path in Path(root).rglob("hippo.db"):
            found[str(path)] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    return found


def test_doctor_on_a_working_install(hippo: Hippo) -> None:
    hippo.start(env=hippo.daemon_env(ANTHROPIC_API_KEY=None))
    proj = project(hippo)
    hippo.ok("remember", "the build needs node 20", cwd=proj)
    hippo.ok("workspaces", "add", proj)  # whatever init's flags do about the registry
    code, document = doctor_json(hippo, cwd=proj)
    assert_exit_rule(code, document)
    checks = by_name(document)
    for name in OWN_CHECKS:
        assert checks[name]["status"] == "ok", checks[name]
        assert checks[name]["fix"] is None
    assert set(document["checks"][0]) == {"name", "status", "message", "fix"}
    # What doctor names as skipped when the daemon is down covers every check the daemon runs.
    assert {c["name"] for c in document["checks"][3:]} <= set(DAEMON_CHECKS)
    assert [c["name"] for c in document["checks"][:3]] == ["Python", "Daemon", "Socket"]
    assert "hippod 0.1.0" in checks["Daemon"]["message"]
    assert checks["Project store"]["message"].startswith(os.path.join(proj, ".hippo", "hippo.db"))
    assert checks["Workspaces"]["message"] == "1 registered, all present"
    assert "next scheduled: daily" in checks["Daily run"]["message"]
    # The text form: one line per check, then the summary, and the same exit code.
    done = hippo.ctl("doctor", cwd=proj)
    assert done.returncode == code
    lines = done.stdout.splitlines()
    assert len(lines) == len(document["checks"]) + 1
    assert lines[0].startswith("ok    Python")
    assert lines[-1].startswith(f"{len(document['checks'])} checks: ")


def test_watch_roots_watched_and_not_there_yet_and_a_watcher_turned_off(hippo: Hippo) -> None:
    projects = os.path.join(hippo.user_home, ".claude", "projects")
    os.makedirs(projects)
    os.makedirs(os.path.join(hippo.user_home, ".codex"))
    hippo.start()
    watch = by_name(doctor_json(hippo)[1])["Watch roots"]
    assert watch["status"] == "ok"
    assert watch["message"].startswith(f"1 watched ({projects}); 1 not there yet (")
    assert os.path.join(hippo.user_home, ".codex", "memories") in watch["message"]
    hippo.stop()

    daemon_json = os.path.join(hippo.home, "daemon.json")
    Path(daemon_json).write_text(json.dumps({"watch": {"enabled": False}}))
    hippo.start()
    code, document = doctor_json(hippo)
    watch = by_name(document)["Watch roots"]
    assert watch["status"] == "warn" and "watcher is off" in watch["message"]
    restart = "then run: hippoctl daemon restart"
    assert watch["fix"] == f'set "watch": {{"enabled": true}} in {daemon_json}, {restart}'
    assert_exit_rule(code, document)


def test_an_api_key_in_the_daemon_env_is_named_with_what_sleep_will_send(hippo: Hippo) -> None:
    """The Anthropic key in the daemon's environment turns sleep's extraction on ("auto"): doctor's
    Network check warns, names what is sent where, and the fix; the key itself is never printed."""
    hippo.start(env=hippo.daemon_env(ANTHROPIC_API_KEY="sk-ant-NOT-PRINTED"))
    code, document = doctor_json(hippo)
    network = by_name(document)["Network"]
    assert network["status"] == "warn"
    assert (
        network["fix"]
        == 'set "extraction": {"enabled": false} in a store\'s config.json to keep its memories here'
    )
    assert (
        'sleep sends up to 20 memories\' text of the tenant it runs for ("default" for the daily '
        "sleep, never raw Slack or GitHub receipts) to "
        "https://api.anthropic.com" in network["message"]
    )
    assert "NOT-PRINTED" not in json.dumps(document)
    assert_exit_rule(code, document)


def test_a_socket_others_can_open_fails(hippo: Hippo) -> None:
    hippo.start()
    os.chmod(hippo.socket, 0o666)
    code, document = doctor_json(hippo)
    socket_check = by_name(document)["Socket"]
    assert socket_check["status"] == "fail" and "0666" in socket_check["message"]
    assert socket_check["fix"] == "hippoctl daemon restart"
    assert code == 1 and document["ok"] is False


def test_a_broken_daemon_json_fails_with_exit_1(hippo: Hippo) -> None:
    os.makedirs(hippo.home)
    Path(hippo.home, "daemon.json").write_text('{"daily": {"time": ', encoding="utf-8")
    hippo.start()
    code, document = doctor_json(hippo)
    config = by_name(document)["Config"]
    assert config["status"] == "fail" and "daemon.json" in config["message"]
    assert "hippoctl daemon restart" in config["fix"]
    assert code == 1
    done = hippo.ctl("doctor")
    assert done.returncode == 1
    assert any(line.startswith("FAIL  Config") and "fix: " in line for line in done.stdout.splitlines())


def service_lines(hippo: Hippo) -> list[str]:
    """doctor's Service lines, in the text form."""
    return [line for line in hippo.ctl("doctor").stdout.splitlines() if line[6:].startswith("Service ")]


def test_the_service_check_asks_the_service_manager(hippo: Hippo) -> None:
    hippo.start()
    hippo.ok("daemon", "install-service")
    unit = os.path.join(hippo.env["XDG_CONFIG_HOME"], "systemd", "user", "hippod.service")
    [service] = [c for c in doctor_json(hippo)[1]["checks"] if c["name"] == "Service"]
    assert service == {
        "name": "Service",
        "status": "ok",
        "message": f"hippod.service (systemd --user) at {unit}, enabled and active",
        "fix": None,
    }
    # Enabled, but this daemon was started by a client: systemd runs hippod from the next login.
    hippo.service_manager(hippod_service_active="inactive")
    [line] = service_lines(hippo)
    assert line.startswith("ok") and f"this hippod (pid {hippo.proc.pid}) was started by a client" in line  # type: ignore[union-attr]

    # Two problems, two lines, each with its own fix.
    hippo.service_manager(hippod_service_active="failed", hippod_service_enabled="disabled")
    code, document = doctor_json(hippo)
    problems = [(c["status"], c["message"], c["fix"]) for c in document["checks"] if c["name"] == "Service"]
    assert problems == [
        (
            "fail",
            "hippod.service is installed but not enabled (disabled): it does not start at login",
            "hippoctl daemon install-service",
        ),
        (
            "fail",
            "hippod.service has failed",
            "see journalctl --user -u hippod.service, then run: hippoctl daemon restart",
        ),
    ]
    assert code == 1
    lines = service_lines(hippo)
    assert len(lines) == 2 and all(line.startswith("FAIL") and "  fix: " in line for line in lines)

    # Without a user bus, systemctl still reads the unit files but cannot say whether hippod runs.
    hippo.service_manager(reachable=False, hippod_service_enabled="enabled")
    [service] = [c for c in doctor_json(hippo)[1]["checks"] if c["name"] == "Service"]
    assert service["status"] == "warn"
    assert service["message"] == (
        "systemd --user cannot be reached (Failed to connect to bus: No medium found), so whether it "
        "runs is unknown"
    )
    assert service["fix"] == "hippoctl daemon restart from a session where `systemctl --user status` works"


def test_a_store_from_a_newer_hippod_fails(hippo: Hippo) -> None:
    import sqlite3

    hippo.start()
    proj = project(hippo)
    hippo.stop()
    conn = sqlite3.connect(os.path.join(proj, ".hippo", "hippo.db"))
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    hippo.start()
    code, document = doctor_json(hippo, cwd=proj)
    store = by_name(document)["Project store"]
    assert store["status"] == "fail" and "schema 999" in store["message"]
    assert code == 1


def test_doctor_with_the_daemon_down_never_starts_it(hippo: Hippo) -> None:
    # Spawning is allowed in this environment: doctor must still leave the daemon down.
    assert "HIPPO_NO_SPAWN" not in hippo.env
    code, document = doctor_json(hippo)
    assert code == 1
    assert [c["name"] for c in document["checks"][:3]] == ["Python", "Daemon", "Socket"]
    daemon = by_name(document)["Daemon"]
    assert daemon["status"] == "fail" and "not running" in daemon["message"]
    assert daemon["fix"] == "hippoctl daemon start"
    assert by_name(document)["Python"]["status"] == "ok"
    # Every check the daemon would have run is named as skipped, and why (no project store here).
    skipped = document["checks"][3:]
    assert [c["name"] for c in skipped] == [n for n in DAEMON_CHECKS if n != "Project store"]
    reason = f"not run: hippod is not running (no answer on {hippo.socket})"
    assert all((c["status"], c["message"], c["fix"]) == ("skip", reason, None) for c in skipped)
    done = hippo.ctl("doctor")
    assert done.returncode == 1 and "FAIL  Daemon" in done.stdout and done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[3] == f"skip  {', '.join(c['name'] for c in skipped)}  {reason}"
    assert lines[4] == f"3 checks: 1 failed, 0 warnings, 2 ok; {len(skipped)} skipped"
    assert hippo.answers() is None
    assert not os.path.exists(hippo.socket)
    assert not os.path.exists(hippo.home)


def test_doctor_and_the_bundle_leave_every_store_byte_identical(hippo: Hippo) -> None:
    hippo.start()
    proj = project(hippo)
    hippo.ok("remember", "kept byte for byte", cwd=proj)
    hippo.ok("--global", "remember", "the global one too")
    hippo.stop()
    hippo.start()
    hippo.ok("daemon", "status")
    before = db_files(hippo.home, proj)
    assert len(before) == 2
    doctor_json(hippo, cwd=proj)
    hippo.ctl("doctor", cwd=proj)
    hippo.ok("support-bundle", "--include-logs", "--out", os.path.join(hippo.root, "b.json"), cwd=proj)
    assert db_files(hippo.home, proj) == before


def test_the_bundle_holds_counts_and_masked_settings_never_memory_text(hippo: Hippo) -> None:
    hippo.start()
    proj = project(hippo)
    Path(proj, ".hippo", "config.json").write_text(
        json.dumps({"slack": {"botToken": "xoxb-DO-NOT-SHIP"}, "apiKey": "sk-DO-NOT-SHIP"}), encoding="utf-8"
    )
    hippo.ok("remember", MARKER, "--pin", cwd=proj)
    hippo.ok("--global", "remember", f"global {MARKER}")
    done = hippo.ok("support-bundle", cwd=proj)
    # Not into the project (where it would sit in the repository): into the global store's folder.
    path = Path(hippo.home, "support", f"hippo-support-{date.today().isoformat()}.json")
    assert done.stdout == f"Wrote the support bundle to {path}\n"
    assert done.stderr == "" and not any(n.startswith("hippo-support") for n in os.listdir(proj))
    raw = path.read_text(encoding="utf-8")
    assert "ZEBRA-QUINCE" not in raw and "DO-NOT-SHIP" not in raw
    bundle = json.loads(raw)
    assert bundle["versions"]["client"] == bundle["versions"]["daemon"] == "0.1.0"
    assert {"python", "platform", "protocol"} <= set(bundle["versions"])
    assert bundle["daemon"]["reachable"] is True
    assert {c["name"] for c in bundle["doctor"]["checks"]} >= set(OWN_CHECKS)
    assert bundle["config"]["project"]["slack"]["botToken"] == "***"
    assert bundle["config"]["project"]["apiKey"] == "***"
    assert bundle["config"]["daemon"]["daily"]["time"] == "06:15"
    stores = {s["kind"]: s for s in bundle["stores"]}
    assert stores["project"]["memories"] == 1 and stores["project"]["pinned"] == 1
    assert stores["project"]["layers"] == {"episodic": 1}
    assert stores["global"]["memories"] == 1
    assert "hippod.log" in bundle["logs"]["files"]
    assert "log_tails" not in bundle
    assert os.stat(path).st_mode & 0o077 == 0


def test_the_bundle_with_logs_warns_that_they_can_hold_memory_text(hippo: Hippo) -> None:
    hippo.start()
    out = os.path.join(hippo.root, "with-logs.json")
    done = hippo.ok("support-bundle", "--include-logs", "--out", out)
    assert done.stdout == f"Wrote the support bundle to {out}\n"
    assert "can contain memory text" in done.stderr
    bundle = json.loads(Path(out).read_text(encoding="utf-8"))
    tails = bundle["log_tails"]
    assert set(tails) == set(bundle["logs"]["files"]) and "hippod.log" in tails
    assert 0 < len(tails["hippod.log"]) <= 200


def test_the_bundle_is_written_when_the_daemon_is_down(hippo: Hippo) -> None:
    out = os.path.join(hippo.root, "down.json")
    done = hippo.ok("support-bundle", "--out", "down.json", cwd=hippo.root)
    assert done.stdout == f"Wrote the support bundle to {out}\n"
    bundle = json.loads(Path(out).read_text(encoding="utf-8"))
    assert bundle["daemon"]["reachable"] is False and "not running" in bundle["daemon"]["note"]
    assert "daemon" not in bundle["versions"] and bundle["versions"]["client"] == "0.1.0"
    assert by_name(bundle["doctor"])["Daemon"]["status"] == "fail"
    assert "config" not in bundle and "stores" not in bundle
    assert hippo.answers() is None


def test_the_bundle_goes_into_a_folder_given_as_out_and_json_names_the_file(hippo: Hippo) -> None:
    hippo.start()
    folder = os.path.join(hippo.root, "tickets")
    os.makedirs(folder)
    data = hippo.json("support-bundle", "--out", folder)
    path = os.path.join(folder, f"hippo-support-{date.today().isoformat()}.json")
    assert data == {
        "path": path,
        "bytes": os.path.getsize(path),
        "include_logs": False,
        "daemon_reachable": True,
    }
    assert json.loads(Path(path).read_text(encoding="utf-8"))["daemon"]["reachable"] is True


def test_a_bundle_that_cannot_be_written_is_one_line_and_exit_1(hippo: Hippo) -> None:
    target = os.path.join(hippo.root, "no", "such", "dir", "b.json")
    done = hippo.ctl("support-bundle", "--out", target)
    assert done.returncode == 1
    assert done.stderr.strip() == f"hippoctl: cannot write {target}: no such directory"
    assert not os.path.exists(os.path.dirname(target))
