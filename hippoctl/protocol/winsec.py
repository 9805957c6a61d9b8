"""Whose pipe is this, on Windows: users' SIDs, the process serving a pipe, and a pipe's security.

The Windows counterpart of ownership.py. Client and daemon both use it: the client before it sends a
byte (the process serving the pipe must run as this user), the daemon when it creates the pipe (a
DACL that admits this user and SYSTEM alone). ctypes and the standard library only; nothing here is
imported on another platform.
"""

from __future__ import annotations

import ctypes
import sys
from ctypes import wintypes
from typing import Any

# Windows only: mypy checks what follows with --platform win32 (.ci/run).
assert sys.platform == "win32", "hippoctl.protocol.winsec is for Windows only"

_kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
_advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)

_TOKEN_QUERY = 0x0008
_TOKEN_USER = 1  # TOKEN_INFORMATION_CLASS.TokenUser
_PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
_SDDL_REVISION_1 = 1

_kernel32.GetCurrentProcess.restype = wintypes.HANDLE
_kernel32.OpenProcess.restype = wintypes.HANDLE
_kernel32.OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
_kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
_kernel32.LocalFree.argtypes = [ctypes.c_void_p]
_kernel32.GetNamedPipeServerProcessId.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.ULONG)]
_advapi32.OpenProcessToken.argtypes = [wintypes.HANDLE, wintypes.DWORD, ctypes.POINTER(wintypes.HANDLE)]
_advapi32.GetTokenInformation.argtypes = [
    wintypes.HANDLE,
    ctypes.c_int,
    ctypes.c_void_p,
    wintypes.DWORD,
    ctypes.POINTER(wintypes.DWORD),
]
_advapi32.ConvertSidToStringSidW.argtypes = [ctypes.c_void_p, ctypes.POINTER(wintypes.LPWSTR)]
_advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW.argtypes = [
    wintypes.LPCWSTR,
    wintypes.DWORD,
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.POINTER(wintypes.ULONG),
]


class SecurityAttributes(ctypes.Structure):
    """SECURITY_ATTRIBUTES, holding a self-relative security descriptor made from SDDL."""

    _fields_ = [
        ("nLength", wintypes.DWORD),
        ("lpSecurityDescriptor", ctypes.c_void_p),
        ("bInheritHandle", wintypes.BOOL),
    ]


def _fail(what: str) -> OSError:
    code = ctypes.get_last_error()
    error = ctypes.WinError(code)
    return OSError(error.errno, f"{what}: {error.strerror}", None, code)


def _token_sid(process: Any) -> str:
    """The user SID, as a string (S-1-5-21-...), of the token of an open process handle."""
    token = wintypes.HANDLE()
    if not _advapi32.OpenProcessToken(process, _TOKEN_QUERY, ctypes.byref(token)):
        raise _fail("OpenProcessToken")
    try:
        size = wintypes.DWORD()
        _advapi32.GetTokenInformation(token, _TOKEN_USER, None, 0, ctypes.byref(size))
        buffer = ctypes.create_string_buffer(size.value)
        if not _advapi32.GetTokenInformation(token, _TOKEN_USER, buffer, size, ctypes.byref(size)):
            raise _fail("GetTokenInformation")
        # TOKEN_USER begins with SID_AND_ATTRIBUTES, whose first field is the PSID.
        sid = ctypes.cast(buffer, ctypes.POINTER(ctypes.c_void_p))[0]
        text = wintypes.LPWSTR()
        if not _advapi32.ConvertSidToStringSidW(sid, ctypes.byref(text)):
            raise _fail("ConvertSidToStringSidW")
        try:
            return str(text.value)
        finally:
            _kernel32.LocalFree(text)
    finally:
        _kernel32.CloseHandle(token)


def current_sid() -> str:
    """This process's user SID."""
    return _token_sid(_kernel32.GetCurrentProcess())


def process_sid(pid: int) -> str:
    """The user SID a process runs as; OSError when it cannot be opened or read."""
    process = _kernel32.OpenProcess(_PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
    if not process:
        raise _fail(f"OpenProcess({pid})")
    try:
        return _token_sid(process)
    finally:
        _kernel32.CloseHandle(process)


def server_pid(handle: int) -> int:
    """The pid of the process that created the server end of a connected pipe."""
    pid = wintypes.ULONG()
    if not _kernel32.GetNamedPipeServerProcessId(handle, ctypes.byref(pid)):
        raise _fail("GetNamedPipeServerProcessId")
    return int(pid.value)


def owner_only_sddl(sid: str) -> str:
    """A protected DACL granting full access to `sid` and to SYSTEM, and to no one else."""
    return f"O:{sid}D:P(A;;GA;;;SY)(A;;GA;;;{sid})"


def security_attributes(sddl: str) -> SecurityAttributes:
    """SECURITY_ATTRIBUTES for CreateNamedPipeW from an SDDL string. The descriptor lives as long
    as the process: the daemon makes one and uses it for every instance of its pipe."""
    descriptor = ctypes.c_void_p()
    if not _advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW(
        sddl, _SDDL_REVISION_1, ctypes.byref(descriptor), None
    ):
        raise _fail("ConvertStringSecurityDescriptorToSecurityDescriptorW")
    return SecurityAttributes(ctypes.sizeof(SecurityAttributes), descriptor, False)
