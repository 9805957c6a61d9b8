"""`support-bundle [--out FILE|DIR] [--include-logs]`: a redacted JSON file for support (integrations.md §12).

It is written to `support/` under the global store's folder, never into the working folder (a
project's repository), unless --out names a file or a folder; the command prints the path.

It holds versions, the doctor's results, the daemon's merged settings with secret values masked, store
counts and the names of the log files; never memory text. `--include-logs` adds the last 200 lines of
every log, which can hold memory text, and says so. The file is still written when the daemon is down.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
from datetime import UTC, date, datetime
from typing import Any

import msgspec

from hippoctl import __version__
from hippoctl.client import ClientError, call, request_envelope
from hippoctl.doctor import all_checks, as_dicts, failed
from hippoctl.protocol import errors, spool
from hippoctl.protocol import messages as m
from hippoctl.protocol.files import write_private
from hippoctl.protocol.paths import log_dir
from hippoctl.protocol.replies_doctor import SupportBundleReply
from hippoctl.protocol.version import PROTOCOL

LOG_LINES = 200
SUPPORT_DIR = "support"
BUNDLE_TIMEOUT = 60.0
LOGS_WARNING = (
    "hippoctl: warning: the log lines in this bundle can contain memory text; read them before sharing it"
)
_BLOCK = 64 * 1024


def default_name(today: date) -> str:
    return f"hippo-support-{today.isoformat()}.json"


def log_names(folder: str) -> list[str]:
    """The files in the log folder, sorted; none when it does not exist."""
    try:
        return sorted(e.name for e in os.scandir(folder) if e.is_file(follow_symlinks=False))
    except OSError:
        return []


def tail(path: str, count: int = LOG_LINES) -> list[str]:
    """The last `count` lines of a file, read backwards from its end in blocks."""
    with open(path, "rb") as handle:
        end = handle.seek(0, os.SEEK_END)
        data = b""
        while end > 0 and data.count(b"\n") <= count:
            start = max(0, end - _BLOCK)
            handle.seek(start)
            data = handle.read(end - start) + data
            end = start
    return data.decode("utf-8", errors="replace").splitlines()[-count:]


def write_file(path: str, data: bytes) -> None:
    """Write atomically (temp file beside it, fsync, rename), readable by this user only."""
    temp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    write_private(path, data, temp)


def daemon_facts(*, cwd: str, global_store: bool) -> tuple[SupportBundleReply | None, str | None]:
    """The daemon's `SupportBundle` reply, or None and why not."""
    request = request_envelope(m.SupportBundle(), cwd=cwd, global_store=global_store)
    try:
        reply = call(request, spawn=False, timeout=BUNDLE_TIMEOUT)
    except ClientError as exc:
        return None, str(exc)
    if isinstance(reply, m.Error):
        return None, reply.message
    try:
        return msgspec.convert(reply.data, SupportBundleReply), None
    except msgspec.ValidationError as exc:
        return None, f"unreadable reply: {exc}"


def build(*, cwd: str, global_store: bool, include_logs: bool) -> dict[str, Any]:
    """The bundle document: client facts always, the daemon's when it answers."""
    checks, info = all_checks(cwd=cwd, global_store=global_store)
    facts, problem = (None, None) if info is None else daemon_facts(cwd=cwd, global_store=global_store)
    versions: dict[str, Any] = {
        "client": __version__,
        "protocol": PROTOCOL,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }
    document: dict[str, Any] = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "versions": versions,
    }
    if facts is not None:
        versions.update(
            daemon=facts.version,
            daemon_protocol=f"{facts.min_protocol}-{facts.protocol}",
            daemon_python=facts.python,
            daemon_platform=facts.platform,
        )
        document["daemon"] = {
            "reachable": True,
            "pid": facts.pid,
            "started_at": facts.started_at,
            "home": facts.home,
            "socket": facts.socket,
        }
    else:
        daemon_check = next((c for c in checks if c.name == "Daemon"), None)
        reason = problem or (daemon_check.message if daemon_check is not None else "no answer")
        document["daemon"] = {
            "reachable": False,
            "note": f"hippod did not answer: {reason}. This bundle holds the client's facts only.",
        }
    document["doctor"] = {"checks": as_dicts(checks), "ok": not failed(checks)}
    if facts is not None:
        document["config"] = facts.config
        document["stores"] = msgspec.to_builtins(facts.stores)
    folder = facts.log_dir if facts is not None else log_dir()
    names = log_names(folder)
    document["logs"] = {"dir": folder, "files": names}
    if include_logs:
        tails: dict[str, list[str]] = {}
        for name in names:
            with contextlib.suppress(OSError):
                tails[name] = tail(os.path.join(folder, name))
        document["log_tails"] = tails
    return document


class Written(msgspec.Struct):
    """What `support-bundle --json` prints: where the bundle went and what it holds."""

    path: str
    bytes: int
    include_logs: bool
    daemon_reachable: bool


def default_folder() -> str:
    """`support/` under the global store's folder: out of any project, and private to this user."""
    return os.path.join(spool.global_root(), SUPPORT_DIR)


def target_path(cwd: str, out: str | None, today: date) -> str:
    """Where the bundle goes: --out (a file, or a folder to put the default name in; relative to the
    working folder), else the default folder."""
    if not out:
        return os.path.join(default_folder(), default_name(today))
    path = os.path.abspath(os.path.join(cwd, os.path.expanduser(out)))
    return os.path.join(path, default_name(today)) if os.path.isdir(path) else path


def write_bundle(
    *, cwd: str, global_store: bool, out: str | None, include_logs: bool, as_json: bool = False
) -> int:
    """Build the bundle, write it (see target_path) and say where."""
    path = target_path(cwd, out, date.today())
    if not out:
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        except OSError as exc:
            raise ClientError(f"cannot write {path}: {exc.strerror or exc}", errors.FAILED) from None
    if not os.path.isdir(os.path.dirname(path)):
        raise ClientError(f"cannot write {path}: no such directory", errors.FAILED)
    document = build(cwd=cwd, global_store=global_store, include_logs=include_logs)
    data = msgspec.json.format(msgspec.json.encode(document), indent=2) + b"\n"
    try:
        write_file(path, data)
    except OSError as exc:
        raise ClientError(f"cannot write {path}: {exc.strerror or exc}", errors.FAILED) from None
    if include_logs:
        print(LOGS_WARNING, file=sys.stderr)
    if as_json:
        reachable = bool(document["daemon"]["reachable"])
        written = Written(path=path, bytes=len(data), include_logs=include_logs, daemon_reachable=reachable)
        print(msgspec.json.encode(written).decode())
    else:
        print(f"Wrote the support bundle to {path}")
    return errors.OK
