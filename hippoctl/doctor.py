"""`doctor`: the client's half (integrations.md §12).

The Python, Daemon and Socket checks run here, so they answer even when the daemon is down; the rest
is one `Doctor` request. Doctor is read-only: it never starts the daemon, whatever the spawn setting.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Sequence
from typing import Any

import msgspec

from hippoctl import __version__, colour, doctor_hooks
from hippoctl.client import ClientError, Refused, call, ping, request_envelope
from hippoctl.protocol import errors
from hippoctl.protocol import messages as m
from hippoctl.protocol.paths import socket_path
from hippoctl.protocol.replies_doctor import DAEMON_CHECKS, FAIL, OK, SKIP, WARN, Check, DoctorReply
from hippoctl.protocol.version import PROTOCOL
from hippoctl.protocol.wording import plural
from hippoctl.selfcommand import hook_command

DOCTOR_TIMEOUT = 120.0  # quick_check reads every page of every store
MIN_PYTHON = (3, 11)
START = "hippoctl daemon start"
RESTART = "hippoctl daemon restart"
_LABELS = {OK: "ok", WARN: "warn", FAIL: "FAIL", SKIP: "skip"}
_COLOURS = {OK: colour.GREEN, WARN: colour.YELLOW, FAIL: colour.RED}
# The daemon's checks of the agents' wiring, which the Hook commands check follows.
AGENT_CHECKS = frozenset({"Claude Code", "Codex", "Codex trust", "OpenCode"})


def python_check(version: Sequence[int] = tuple(sys.version_info[:3])) -> Check:
    """Fail below Python 3.11."""
    shown = ".".join(str(n) for n in version[:3])
    if tuple(version[:2]) < MIN_PYTHON:
        return Check(
            "Python", FAIL, f"Python {shown} is older than 3.11", "install hippod under Python 3.11 or newer"
        )
    return Check("Python", OK, f"Python {shown} ({sys.executable})")


def _mode(st: os.stat_result) -> str:
    return f"{stat.S_IMODE(st.st_mode):04o}"


def socket_check(sock: str, *, explicit: bool, uid: int | None = None) -> list[Check]:
    """The socket's folder must be private to this user (0700) and the socket 0600; one check per
    problem, each with its own fix.

    With $HIPPO_SOCKET the user chose the folder, so a shared one is a warning there, not a failure.
    """
    if sys.platform == "win32":
        # A named pipe has no folder or mode: its DACL, made by the daemon, admits this user alone.
        return []
    uid = os.getuid() if uid is None else uid
    folder = os.path.dirname(sock)
    problems: list[Check] = []
    try:
        folder_st = os.stat(folder)
    except OSError:
        return [Check("Socket", WARN, f"{folder} does not exist (hippod creates it when it starts)", START)]
    if folder_st.st_uid != uid or stat.S_IMODE(folder_st.st_mode) & 0o077:
        owner = "" if folder_st.st_uid == uid else f", owned by uid {folder_st.st_uid}"
        problems.append(
            Check(
                "Socket",
                WARN if explicit else FAIL,
                f"runtime dir {folder} is mode {_mode(folder_st)}{owner}, not a private 0700 folder",
                f"chmod 700 {folder}"
                if folder_st.st_uid == uid
                else "set XDG_RUNTIME_DIR to a folder of yours",
            )
        )
    try:
        sock_st = os.lstat(sock)
    except OSError:
        sock_st = None
    if sock_st is not None:
        if not stat.S_ISSOCK(sock_st.st_mode):
            problems.append(
                Check("Socket", FAIL, f"{sock} is not a socket", f"remove {sock}, then run: {START}")
            )
        elif sock_st.st_uid != uid or stat.S_IMODE(sock_st.st_mode) & 0o077:
            problems.append(
                Check("Socket", FAIL, f"socket {sock} is mode {_mode(sock_st)}, not 0600", RESTART)
            )
    if problems:
        return problems
    state = "0600" if sock_st is not None else "not there (hippod is not running)"
    return [Check("Socket", OK, f"{sock}: {state}; runtime dir 0700")]


def daemon_check() -> tuple[Check, dict[str, Any] | None]:
    """Whether the daemon answers (without starting it), and speaks this client's protocol and version.

    Also the daemon's Ping reply, or None when the daemon cannot take a request from this client.
    """
    try:
        info = ping(spawn=False)
    except Refused as exc:
        return Check("Daemon", FAIL, str(exc), "set XDG_RUNTIME_DIR to a folder of yours"), None
    except ClientError as exc:
        return Check("Daemon", FAIL, f"hippod answered but cannot talk to this client: {exc}", RESTART), None
    if info is None:
        return Check("Daemon", FAIL, f"hippod is not running (no answer on {socket_path()})", START), None
    version, pid = info.get("version"), info.get("pid")
    low, high = info.get("min_protocol", info.get("protocol")), info.get("protocol")
    speaks = f"hippod {version} (protocol {low}-{high}), pid {pid}"
    if not (isinstance(low, int) and isinstance(high, int) and low <= PROTOCOL <= high):
        message = f"{speaks} does not speak this hippoctl's protocol {PROTOCOL}"
        return Check("Daemon", FAIL, message, RESTART), None
    if version != __version__:
        return Check("Daemon", FAIL, f"{speaks}, but this hippoctl is {__version__}", RESTART), info
    return Check("Daemon", OK, speaks), info


def client_checks() -> tuple[list[Check], dict[str, Any] | None]:
    """Python, Daemon and Socket; also the daemon's Ping reply, or None when it cannot take a request."""
    daemon, info = daemon_check()
    explicit = bool(os.environ.get("HIPPO_SOCKET", "").strip())
    return [python_check(), daemon, *socket_check(socket_path(), explicit=explicit)], info


def _project_store_above(cwd: str) -> bool:
    """Whether a project store (a `.hippo/hippo.db`) is at or above cwd, as the daemon finds one."""
    folder = os.path.realpath(cwd)
    while not os.path.isfile(os.path.join(folder, ".hippo", "hippo.db")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent
    return True


def skipped_checks(reason: str, *, cwd: str, global_store: bool) -> list[Check]:
    """The daemon's checks, each marked as not run and why: what doctor did not look at."""
    project = not global_store and _project_store_above(cwd)
    names = [n for n in DAEMON_CHECKS if n != "Project store" or project]
    return [Check(name, SKIP, f"not run: {reason}") for name in names]


def daemon_checks(*, cwd: str, global_store: bool) -> list[Check]:
    """The `Doctor` request's checks, with the Hook commands check after the agents' and the block
    commands' after the Blocks checks; a refused request becomes one failed check."""
    request = request_envelope(m.Doctor(command=hook_command()), cwd=cwd, global_store=global_store)
    try:
        reply = call(request, spawn=False, timeout=DOCTOR_TIMEOUT)
    except ClientError as exc:
        return [Check("Daemon checks", FAIL, f"no answer to the doctor request: {exc}", RESTART)]
    if isinstance(reply, m.Error):
        return [Check("Daemon checks", FAIL, reply.message, reply.hint or RESTART)]
    try:
        found = msgspec.convert(reply.data, DoctorReply)
    except msgspec.ValidationError as exc:
        return [Check("Daemon checks", FAIL, f"unreadable doctor reply: {exc}", RESTART)]
    checks = found.checks
    after = max((i + 1 for i, c in enumerate(checks) if c.name in AGENT_CHECKS), default=len(checks))
    hooks = doctor_hooks.checks(found.commands, cwd=cwd)
    checks = [*checks[:after], *hooks, *checks[after:]]
    # The blocks' commands follow the daemon's Blocks checks of the files that hold them.
    blocks_at = (i + 1 for i, c in enumerate(checks) if c.name == doctor_hooks.BLOCKS)
    after = max(blocks_at, default=after + len(hooks))
    return [*checks[:after], *doctor_hooks.block_checks(found.blocks, cwd=cwd), *checks[after:]]


def all_checks(*, cwd: str, global_store: bool) -> tuple[list[Check], dict[str, Any] | None]:
    """The client's checks, then the daemon's when it answers; and the daemon's Ping reply."""
    checks, info = client_checks()
    if info is not None:
        checks += daemon_checks(cwd=cwd, global_store=global_store)
    else:
        daemon = next(c for c in checks if c.name == "Daemon")
        checks += skipped_checks(daemon.message, cwd=cwd, global_store=global_store)
    return checks, info


def failed(checks: Sequence[Check]) -> bool:
    return any(c.status == FAIL for c in checks)


def as_dicts(checks: Sequence[Check]) -> list[dict[str, str | None]]:
    """Checks for JSON, every key present (fix is null when there is nothing to mend)."""
    return [{"name": c.name, "status": c.status, "message": c.message, "fix": c.fix} for c in checks]


def render(checks: Sequence[Check], *, colours: bool = False) -> str:
    """One line per check (`fix:` on problems), the skipped ones together on one line per reason,
    then a summary line; `colours` paints the status."""
    run = [c for c in checks if c.status != SKIP]
    width = max((len(c.name) for c in run), default=0)
    lines = []
    for c in run:
        label = colour.paint(f"{_LABELS.get(c.status, c.status):<4}", _COLOURS.get(c.status, ""), colours)
        line = f"{label}  {c.name:<{width}}  {c.message}"
        if c.status != OK and c.fix:
            line += f"  fix: {c.fix}"
        lines.append(line)
    skipped: dict[str, list[str]] = {}
    for c in checks:
        if c.status == SKIP:
            skipped.setdefault(c.message, []).append(c.name)
    lines += [f"{_LABELS[SKIP]:<4}  {', '.join(names)}  {why}" for why, names in skipped.items()]
    counts = {s: sum(c.status == s for c in checks) for s in (FAIL, WARN, OK, SKIP)}
    summary = f"{plural(len(run), 'check')}: {counts[FAIL]} failed, {plural(counts[WARN], 'warning')}, "
    summary += f"{counts[OK]} ok"
    if counts[SKIP]:
        summary += f"; {counts[SKIP]} skipped"
    lines.append(summary)
    return "\n".join(lines)


def run(*, cwd: str, global_store: bool, spawn: bool, as_json: bool) -> int:
    """Print every check (client-side ones even when the daemon is down); 1 when any fails."""
    checks, _ = all_checks(cwd=cwd, global_store=global_store)
    bad = failed(checks)
    if as_json:
        document = {"checks": as_dicts(checks), "ok": not bad}
        sys.stdout.write(msgspec.json.encode(document).decode() + "\n")
    else:
        sys.stdout.write(render(checks, colours=colour.enabled(sys.stdout)) + "\n")
    return errors.FAILED if bad else errors.OK
