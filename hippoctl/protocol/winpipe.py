"""The client's end of the daemon's named pipe on Windows, shaped like the socket it replaces.

`connect` opens `\\\\.\\pipe\\...` with overlapped I/O and returns a PipeConnection whose `sendall`,
`recv`, `settimeout` and `close` behave as a blocking socket's with a timeout do, so everything
above the transport (framing, the handshake, progress and cancel) is one code path. Nothing is
checked or sent here: client.py asks `winsec` who serves the pipe first. `_winapi` is compiled into
CPython on Windows, so this costs the client's start-up nothing but ctypes for the check.
"""

from __future__ import annotations

import _winapi
import sys
import time

# Windows only: mypy checks what follows with --platform win32 (.ci/run).
assert sys.platform == "win32", "hippoctl.protocol.winpipe is for Windows only"

ERROR_FILE_NOT_FOUND = 2
ERROR_BROKEN_PIPE = 109
ERROR_SEM_TIMEOUT = 121
ERROR_PIPE_BUSY = 231
ERROR_NO_DATA = 232
ERROR_PIPE_NOT_CONNECTED = 233
ERROR_OPERATION_ABORTED = 995
_CLOSED = (ERROR_BROKEN_PIPE, ERROR_NO_DATA, ERROR_PIPE_NOT_CONNECTED)
# A server that closed its end, or a process that exited, while it was being looked at.
ERROR_INVALID_PARAMETER = 87
_GONE = (*_CLOSED, ERROR_INVALID_PARAMETER)
_WAIT_TIMEOUT = 258
_INFINITE = 0xFFFFFFFF
# The server may identify this client but never act as it (CreateFile's SECURITY_SQOS_PRESENT with
# SecurityIdentification): a process squatting the pipe's name must not borrow our rights.
_SQOS_IDENTIFICATION = 0x00100000 | (1 << 16)


def name_taken(name: str) -> bool:
    """Whether some process serves a pipe of this name (one of its instances may be busy)."""
    try:
        _winapi.WaitNamedPipe(name, 1)
    except OSError as exc:
        return exc.winerror != ERROR_FILE_NOT_FOUND
    return True


def _millis(timeout: float | None) -> int:
    return _INFINITE if timeout is None else max(0, int(timeout * 1000))


class PipeConnection:
    """A connected pipe handle with a socket's blocking, timed reads and writes."""

    def __init__(self, handle: int) -> None:
        self.handle: int | None = handle
        self.timeout: float | None = None

    def settimeout(self, timeout: float | None) -> None:
        self.timeout = timeout

    def fileno(self) -> int:
        if self.handle is None:
            raise OSError("the pipe is closed")
        return self.handle

    def _finish(self, overlapped: _winapi.Overlapped, pending: bool) -> tuple[int, int]:
        """The (bytes transferred, error) of an overlapped call, waited for within the timeout.

        Past the timeout the call is cancelled; if it completed meanwhile its bytes count, as a
        socket's timeout never loses data. Only a call the cancel stopped raises TimeoutError.
        """
        if pending:
            try:
                waited = _winapi.WaitForMultipleObjects([overlapped.event], False, _millis(self.timeout))
            except BaseException:  # Ctrl-C: the call must not outlive its buffer
                overlapped.cancel()
                overlapped.GetOverlappedResult(True)
                raise
            if waited == _WAIT_TIMEOUT:
                overlapped.cancel()
        try:
            transferred, error = overlapped.GetOverlappedResult(True)
        except OSError as exc:
            if exc.winerror in _CLOSED:
                return 0, exc.winerror
            raise
        if error == ERROR_OPERATION_ABORTED:
            raise TimeoutError("timed out")
        return transferred, error

    def recv(self, size: int) -> bytes:
        """Up to `size` bytes; b"" once the daemon has closed its end."""
        try:
            overlapped, error = _winapi.ReadFile(self.fileno(), size, overlapped=True)
        except OSError as exc:
            if exc.winerror in _CLOSED:
                return b""
            raise
        _read, error = self._finish(overlapped, error == _winapi.ERROR_IO_PENDING)
        if error in _CLOSED:
            return b""
        if error not in (0, _winapi.ERROR_MORE_DATA):
            raise OSError(None, "reading from the pipe failed", None, error)
        return bytes(overlapped.getbuffer() or b"")

    def sendall(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                overlapped, error = _winapi.WriteFile(self.fileno(), view, overlapped=True)
            except OSError as exc:
                raise BrokenPipeError(None, "the pipe was closed", None, exc.winerror) from None
            written, error = self._finish(overlapped, error == _winapi.ERROR_IO_PENDING)
            if error:
                raise BrokenPipeError(None, "the pipe was closed", None, error)
            view = view[written:]

    def close(self) -> None:
        if self.handle is not None:
            _winapi.CloseHandle(self.handle)
            self.handle = None

    def __enter__(self) -> PipeConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class NotThisUsers(Exception):
    """The process serving the pipe runs as another user, or cannot be told: nothing was sent."""


def connect_checked(name: str, timeout: float) -> PipeConnection | None:
    """`connect`, once the process serving the pipe is known to run as this user.

    The daemon's DACL admits only this user and SYSTEM, but anyone may create a pipe of that name
    first; so the server's process token is read (its SID) before a byte is sent.
    """
    from hippoctl.protocol import winsec

    conn = connect(name, timeout)
    if conn is None:
        return None
    try:
        pid = winsec.server_pid(conn.fileno())
        theirs, mine = winsec.process_sid(pid), winsec.current_sid()
    except OSError as exc:
        conn.close()
        if exc.winerror in _GONE:
            return None  # the instance or its daemon went away meanwhile: as if no one served it
        raise NotThisUsers(f"cannot tell which user serves it ({exc.strerror or exc})") from None
    if theirs != mine:
        conn.close()
        raise NotThisUsers(f"it is served by {theirs} (pid {pid}), not by this user ({mine})")
    return conn


def connect(name: str, timeout: float) -> PipeConnection | None:
    """The client end of pipe `name`, or None when no one serves it or every instance stays busy
    for `timeout` seconds. Other failures raise OSError."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            handle = _winapi.CreateFile(
                name,
                _winapi.GENERIC_READ | _winapi.GENERIC_WRITE,
                0,
                _winapi.NULL,
                _winapi.OPEN_EXISTING,
                _winapi.FILE_FLAG_OVERLAPPED | _SQOS_IDENTIFICATION,
                _winapi.NULL,
            )
        except OSError as exc:
            if exc.winerror == ERROR_FILE_NOT_FOUND:
                return None
            if exc.winerror != ERROR_PIPE_BUSY:
                raise
        else:
            return PipeConnection(handle)
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        try:
            # The daemon keeps an instance listening; every one being busy lasts a moment.
            _winapi.WaitNamedPipe(name, _millis(min(left, 0.25)) or 1)
        except OSError as exc:
            if exc.winerror not in (ERROR_SEM_TIMEOUT, ERROR_FILE_NOT_FOUND):
                raise
