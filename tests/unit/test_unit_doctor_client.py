"""The client's half of doctor and support-bundle: Python and Socket checks, the text, log tails, the file."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from hippoctl import doctor, support_bundle
from hippoctl.protocol.replies_doctor import Check


def test_python_below_3_11_fails() -> None:
    assert doctor.python_check((3, 10, 9)).status == "fail"
    assert doctor.python_check((3, 11, 0)).status == "ok"
    assert doctor.python_check().status == "ok"


@pytest.fixture
def private_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "rt"
    folder.mkdir(mode=0o700)
    os.chmod(folder, 0o700)
    return folder


@pytest.fixture
def bound(private_dir: Path) -> Iterator[str]:
    """A real listening Unix socket, 0600, in a 0700 folder."""
    path = str(private_dir / "d.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(1)
    os.chmod(path, 0o600)
    try:
        yield path
    finally:
        sock.close()


def test_a_private_folder_and_socket_are_ok(bound: str) -> None:
    [check] = doctor.socket_check(bound, explicit=False)
    assert check.status == "ok" and "0600" in check.message


def test_a_socket_others_can_open_fails(bound: str) -> None:
    os.chmod(bound, 0o666)
    [check] = doctor.socket_check(bound, explicit=False)
    assert check.status == "fail" and "0666" in check.message
    assert check.fix == "hippoctl daemon restart"


def test_a_shared_runtime_dir_fails(bound: str) -> None:
    folder = os.path.dirname(bound)
    os.chmod(folder, 0o755)
    [check] = doctor.socket_check(bound, explicit=False)
    assert check.status == "fail" and "0755" in check.message
    assert check.fix == f"chmod 700 {folder}"
    # A folder the user chose with HIPPO_SOCKET is their call: a warning.
    assert [c.status for c in doctor.socket_check(bound, explicit=True)] == ["warn"]


def test_a_file_in_place_of_the_socket_fails(private_dir: Path) -> None:
    path = private_dir / "d.sock"
    path.write_text("not a socket")
    [check] = doctor.socket_check(str(path), explicit=False)
    assert check.status == "fail" and "not a socket" in check.message


def test_a_folder_owned_by_someone_else_fails(bound: str) -> None:
    folder, sock = doctor.socket_check(bound, explicit=False, uid=os.getuid() + 1)
    assert folder.status == "fail" and "owned by uid" in folder.message
    assert sock.status == "fail" and "not 0600" in sock.message


def test_two_problems_are_two_lines_each_with_its_fix(bound: str) -> None:
    folder = os.path.dirname(bound)
    os.chmod(folder, 0o755)
    os.chmod(bound, 0o666)
    checks = doctor.socket_check(bound, explicit=False)
    assert [(c.status, c.fix) for c in checks] == [
        ("fail", f"chmod 700 {folder}"),
        ("fail", "hippoctl daemon restart"),
    ]
    lines = doctor.render(checks).splitlines()
    assert lines[0].startswith("FAIL  Socket  runtime dir ") and lines[0].endswith(f"fix: chmod 700 {folder}")
    assert lines[1].startswith(f"FAIL  Socket  socket {bound} is mode 0666") and lines[1].endswith(
        "fix: hippoctl daemon restart"
    )
    assert lines[2] == "2 checks: 2 failed, 0 warnings, 0 ok"


def test_skipped_checks_share_one_line_per_reason() -> None:
    checks = [Check("Daemon", "fail", "hippod is not running", "hippoctl daemon start")]
    checks += doctor.skipped_checks("hippod is not running", cwd="/", global_store=False)
    assert "Project store" not in [c.name for c in checks]  # no store above /
    lines = doctor.render(checks).splitlines()
    names = "Service, Global store, Sleep, Daily run, Workspaces, Watch roots, Claude Code, Codex, "
    names += "Codex trust, OpenCode, Hook commands, Blocks, Spool, Config, Embeddings, Network"
    assert lines[1] == f"skip  {names}  not run: hippod is not running"
    assert lines[2] == "1 check: 1 failed, 0 warnings, 0 ok; 16 skipped"
    assert doctor.failed(checks)


def test_no_socket_yet_is_ok_for_this_check(private_dir: Path) -> None:
    assert [c.status for c in doctor.socket_check(str(private_dir / "d.sock"), explicit=False)] == ["ok"]
    assert [c.status for c in doctor.socket_check(str(private_dir / "none" / "d.sock"), explicit=False)] == [
        "warn"
    ]


def test_render_marks_failures_and_names_their_fix() -> None:
    text = doctor.render(
        [
            Check("Python", "ok", "Python 3.11.7"),
            Check("Config", "fail", "daemon.json is unreadable", "fix the JSON"),
            Check("Sleep", "warn", "global store last slept 9 days ago", "hippoctl sleep --global"),
        ]
    )
    lines = text.splitlines()
    assert lines[0].startswith("ok    Python") and "fix:" not in lines[0]
    assert lines[1].startswith("FAIL  Config") and lines[1].endswith("fix: fix the JSON")
    assert lines[2].startswith("warn  Sleep") and lines[2].endswith("fix: hippoctl sleep --global")
    assert lines[3] == "3 checks: 1 failed, 1 warning, 1 ok"
    assert doctor.failed([Check("a", "warn", "")]) is False
    expected = [{"name": "a", "status": "ok", "message": "m", "fix": None}]
    assert doctor.as_dicts([Check("a", "ok", "m")]) == expected


def test_tail_keeps_the_last_lines_of_a_long_log(tmp_path: Path) -> None:
    log = tmp_path / "hippod.log"
    log.write_text("".join(f"line {i} " + "x" * 500 + "\n" for i in range(1000)))
    lines = support_bundle.tail(str(log))
    assert len(lines) == 200
    assert lines[0].startswith("line 800 ") and lines[-1].startswith("line 999 ")
    short = tmp_path / "daily.log"
    short.write_text("one\ntwo")
    assert support_bundle.tail(str(short)) == ["one", "two"]


def test_log_names_lists_files_only(tmp_path: Path) -> None:
    (tmp_path / "hippod.log").write_text("")
    (tmp_path / "hippod.log.1").write_text("")
    (tmp_path / "sub").mkdir()
    assert support_bundle.log_names(str(tmp_path)) == ["hippod.log", "hippod.log.1"]
    assert support_bundle.log_names(str(tmp_path / "missing")) == []


def test_the_file_is_written_whole_and_private(tmp_path: Path) -> None:
    target = tmp_path / support_bundle.default_name(date(2026, 3, 1))
    assert target.name == "hippo-support-2026-03-01.json"
    target.write_text("old")
    support_bundle.write_file(str(target), b'{"new": true}\n')
    assert target.read_bytes() == b'{"new": true}\n'
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == [target.name]


def test_doctor_and_the_bundle_load_no_daemon_modules() -> None:
    code = (
        "import hippoctl.doctor, hippoctl.support_bundle, sys; "
        "print('\\n'.join({m.split('.')[0] for m in sys.modules}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert "hippoctl" in loaded
    assert loaded & {"sqlite3", "_sqlite3", "aiosqlite", "hippod", "platformdirs", "mcp"} == set()
