"""hippod on Windows over its named pipe: the client starts the daemon, requests go over the pipe with
the Unix socket's framing and handshake, bad frames are survived, the pipe is this user's alone, and
`daemon stop` needs no signal."""

from __future__ import annotations

import _winapi
import contextlib
import ctypes
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from ctypes import wintypes
from datetime import datetime
from typing import Any

import msgspec
import pytest
from conftest import TIMEOUT, WinHippo

from hippoctl.protocol import messages as m
from hippoctl.protocol import paths, spool, winpipe
from hippoctl.protocol.framing import pack, recv_frame
from hippoctl.protocol.version import PROTOCOL

_kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
_advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)


def _image(pid: int) -> str:
    """The executable a process runs (QueryFullProcessImageNameW)."""
    _kernel32.OpenProcess.restype = wintypes.HANDLE
    handle = _kernel32.OpenProcess(0x1000, False, pid)
    assert handle, ctypes.get_last_error()
    try:
        size = wintypes.DWORD(1024)
        buffer = ctypes.create_unicode_buffer(size.value)
        assert _kernel32.QueryFullProcessImageNameW(wintypes.HANDLE(handle), 0, buffer, ctypes.byref(size))
        return buffer.value
    finally:
        _kernel32.CloseHandle(wintypes.HANDLE(handle))


def _pipe_of(hippo: WinHippo) -> str:
    return paths.pipe_name(paths.instance_key(hippo.env), hippo.env)


def test_the_client_starts_a_windowless_daemon_that_serves_the_users_pipe(hippo: WinHippo) -> None:
    assert "Remembered" in hippo.ok("remember", "The build uses uv, not pip").stdout
    status = hippo.status()
    assert status["socket"] == _pipe_of(hippo)
    assert status["socket"].startswith("\\\\.\\pipe\\hippod-")
    assert status["socket"].endswith("-" + paths.instance_key(hippo.env))
    # Started detached, without a console window: pythonw.exe beside this interpreter.
    assert os.path.basename(_image(status["pid"])).lower() == "pythonw.exe"
    assert os.path.realpath(status["home"]) == os.path.realpath(hippo.home)
    # Its 06:15 daily run is scheduled, in local time, by apscheduler on Windows too.
    schedule = status["schedule"]
    assert schedule["daily_enabled"] and schedule["daily_time"] == "06:15"
    assert datetime.fromisoformat(schedule["daily_next"]).astimezone().strftime("%H:%M") == "06:15"


def test_remember_recall_outcome_and_inspect_over_the_pipe(hippo: WinHippo) -> None:
    memory = hippo.json("remember", "Deploys go out on Tuesday after the freeze")["id"]
    results = hippo.json("recall", "deploys tuesday")["results"]
    assert [r["id"] for r in results] == [memory]
    hippo.ok("outcome", "--good", "--id", memory)
    inspected = hippo.json("inspect", memory)["memory"]
    assert inspected["content"] == "Deploys go out on Tuesday after the freeze"
    assert inspected["outcome_positive"] == 1
    # Text outside the console's code page reaches a host that reads UTF-8 from the pipe intact.
    hippo.ok("remember", "Café menus use the « guillemets » and → arrows")
    assert "« guillemets » and → arrows" in hippo.ok("recall", "café guillemets").stdout


def test_twenty_clients_at_once(hippo: WinHippo) -> None:
    hippo.ok("remember", "warm up the daemon before the crowd")
    with ThreadPoolExecutor(max_workers=20) as pool:
        done = list(
            pool.map(lambda i: hippo.ctl("remember", f"parallel fact number {i} zebra{i}"), range(20))
        )
    assert [d.returncode for d in done] == [0] * 20, [d.stderr for d in done if d.returncode]
    found = hippo.json("recall", " ".join(f"zebra{i}" for i in range(20)), "--limit", "50")["results"]
    assert sorted(r["content"] for r in found) == sorted(
        f"parallel fact number {i} zebra{i}" for i in range(20)
    )


def _raw(name: str) -> winpipe.PipeConnection:
    conn = winpipe.connect(name, 5.0)
    assert conn is not None
    conn.settimeout(30.0)
    return conn


def _hello(hippo: WinHippo) -> bytes:
    hello = m.Hello(protocol=PROTOCOL, client_version="test", pid=os.getpid(), home=hippo.home)
    return pack(msgspec.msgpack.encode(hello))


def _reply(conn: winpipe.PipeConnection) -> Any:
    raw = recv_frame(conn)
    assert raw is not None
    return msgspec.msgpack.decode(raw, type=m.DaemonMessage)


def test_a_garbage_frame_and_an_oversized_frame_are_answered_and_survived(hippo: WinHippo) -> None:
    hippo.ok("remember", "the daemon outlives bad frames")
    name = hippo.status()["socket"]
    with _raw(name) as conn:
        conn.sendall(b"\x00\x00\x00\x07garbage")
        error = _reply(conn)
        assert isinstance(error, m.Error) and error.code == "bad_frame"
    with _raw(name) as conn:
        conn.sendall(_hello(hippo))
        assert isinstance(_reply(conn), m.Welcome)
        conn.sendall((64 * 1024 * 1024).to_bytes(4, "big") + b"\x00" * 1024)
        error = _reply(conn)
        assert isinstance(error, m.Error) and error.code == "frame_too_large"
    # A client that connects and leaves without a byte, as a killed hook does.
    _raw(name).close()
    assert "outlives bad frames" in hippo.ok("recall", "daemon outlives frames").stdout


def _dacl(handle: int) -> str:
    """The pipe's DACL in SDDL, as GetSecurityInfo reads it from an open handle."""
    descriptor, dacl = ctypes.c_void_p(), ctypes.c_void_p()
    se_kernel_object, dacl_information = 6, 4
    code = _advapi32.GetSecurityInfo(
        wintypes.HANDLE(handle),
        se_kernel_object,
        dacl_information,
        None,
        None,
        ctypes.byref(dacl),
        None,
        ctypes.byref(descriptor),
    )
    assert code == 0, code
    text = wintypes.LPWSTR()
    assert _advapi32.ConvertSecurityDescriptorToStringSecurityDescriptorW(
        descriptor, 1, dacl_information, ctypes.byref(text), None
    )
    return str(text.value)


def test_the_pipe_admits_this_user_and_system_alone(hippo: WinHippo) -> None:
    from hippoctl.protocol import winsec

    hippo.ok("remember", "only this user may connect")
    with _raw(hippo.status()["socket"]) as conn:
        assert _dacl(conn.fileno()) == f"D:P(A;;GA;;;SY)(A;;GA;;;{winsec.current_sid()})"


def test_daemon_stop_then_status(hippo: WinHippo) -> None:
    hippo.ok("remember", "stopping needs no signal on Windows")
    pid = hippo.status()["pid"]
    assert hippo.ok("daemon", "stop").stdout.strip() == "hippod stopped"
    done = hippo.ctl("daemon", "status")
    assert done.returncode == 3
    assert done.stderr.strip() == f"hippoctl: hippod is not running (no answer on {_pipe_of(hippo)})"
    # The process is gone, not merely deaf.
    _kernel32.OpenProcess.restype = wintypes.HANDLE
    handle = _kernel32.OpenProcess(0x00100000, False, pid)  # SYNCHRONIZE
    if handle:
        assert _kernel32.WaitForSingleObject(wintypes.HANDLE(handle), 10_000) == 0
        _kernel32.CloseHandle(wintypes.HANDLE(handle))
    assert hippo.ok("daemon", "stop").stdout.strip() == "hippod is not running"


def test_a_process_holding_the_pipe_name_keeps_the_daemon_from_starting(hippo: WinHippo) -> None:
    name = _pipe_of(hippo)
    squatter = _winapi.CreateNamedPipe(name, 0x3 | 0x40000000, 0, 255, 4096, 4096, 0, _winapi.NULL)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "hippod", "run"],
            capture_output=True,
            text=True,
            env=hippo.env,
            timeout=TIMEOUT,
            check=False,
        )
    finally:
        _winapi.CloseHandle(squatter)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"hippod: another process already serves the pipe {name}; refusing to start"
    )


class _Impostor:
    """A pipe server of the daemon's name, in this process, counting the bytes clients send it."""

    def __init__(self, name: str) -> None:
        self.received = 0
        self.connected = threading.Event()
        self.handle = _winapi.CreateNamedPipe(name, 0x3, 0, 1, 4096, 4096, 0, _winapi.NULL)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):  # a client that connected first: ERROR_PIPE_CONNECTED
            _winapi.ConnectNamedPipe(self.handle, False)
        self.connected.set()
        try:
            while chunk := _winapi.ReadFile(self.handle, 4096)[0]:
                self.received += len(chunk)
        except OSError:
            pass

    def close(self) -> None:
        _winapi.CloseHandle(self.handle)


def test_a_client_refuses_a_pipe_served_by_another_user(
    hippo: WinHippo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Wine has one user: the server here runs as this user, and the client is told it is another
    one (its own SID replaced), so the SID check fails as it would against another user's server."""
    from hippoctl import cli
    from hippoctl.protocol import winsec

    for key, value in hippo.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HIPPO_NO_SPAWN", "1")
    monkeypatch.chdir(hippo.work)
    real = winsec.current_sid()
    other = "S-1-5-21-1111111111-2222222222-3333333333-1001"
    monkeypatch.setattr(winsec, "current_sid", lambda: other)
    name = _pipe_of(hippo)
    impostor = _Impostor(name)
    try:
        code = cli.main(["recall", "anything at all"])
        assert impostor.connected.wait(10)
    finally:
        impostor.close()
        impostor.thread.join(10)
    assert (code, impostor.received) == (3, 0)
    out, err = capsys.readouterr()
    refused = f"refusing to talk to hippod on {name}: it is served by {real}"
    assert out == ""
    assert err.strip() == f"hippoctl: {refused} (pid {os.getpid()}), not by this user ({other})"

    # A hook facing the same server sends it nothing either: it spools its request and exits 0.
    impostor = _Impostor(name)
    payload = os.path.join(hippo.work, "payload.json")
    with open(payload, "w", encoding="utf-8") as handle:
        handle.write('{"session_id": "s-win", "hook_event_name": "SessionEnd", "transcript_path": ""}')
    monkeypatch.setattr(sys, "stdin", open(payload, encoding="utf-8"))  # noqa: SIM115 (the hook reads it)
    try:
        code = cli.main(["session-end"])
    finally:
        impostor.close()
        impostor.thread.join(10)
    assert (code, impostor.received) == (0, 0)
    spooled = [n for k in spool.KINDS for n in spool.json_names(os.path.join(hippo.home, "spool", k))]
    assert len(spooled) == 1, spooled
