"""`hippod run [--foreground] [--detach]`: paths, umask, logging, the single-instance lock, asyncio.run."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from hippoctl.protocol import ownership, paths
from hippoctl.protocol.detached import daemon_argv, detached_options
from hippoctl.protocol.service_names import LAUNCHD_LABEL
from hippoctl.protocol.spool import global_root
from hippod import __version__
from hippod.base import clock
from hippod.base.config import LOG_LEVELS, load_daemon_config
from hippod.base.logfile import RotatingLog
from hippod.daemon import instance
from hippod.daemon.lock import LockFileError
from hippod.daemon.probe import ping
from hippod.daemon.sd_notify import notify
from hippod.model.strength import loss_aversion_from_env

log = logging.getLogger("hippod")

# `hippod run` while another daemon serves this home (the README's exit codes).
ALREADY_RUNNING = 3
DETACH_WAIT_SECONDS = 5.0
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class TeamServe:
    """`hippod serve`'s options: the team's database and where the HTTP API listens."""

    dsn: str | None
    host: str | None
    port: int | None
    allow_remote: bool

    def apply(self, config: dict[str, Any]) -> None:
        """Into daemon.json's values: the team's database, the HTTP API opened at start, and none of a
        laptop's own work (the folder watchers, the card reclaim). The daily run stays: on a team
        server it sleeps each tenant (store/postgres/daily.py)."""
        dsn = self.dsn or config["team"].get("dsn")
        if not isinstance(dsn, str) or not dsn.strip():
            raise StartupError(
                "serve needs the team's database: --team postgresql://... or daemon.json team.dsn"
            )
        if self.port is not None and not 0 <= self.port <= 65535:
            raise StartupError("--port must be 0 to 65535")
        config["team"]["dsn"] = dsn.strip()
        http = config["http"]
        http["autostart"] = True
        http["host"] = self.host or http.get("host") or "127.0.0.1"
        if self.port is not None:
            http["port"] = self.port
        http["allowRemote"] = self.allow_remote or bool(http.get("allowRemote", False))
        config["watch"]["enabled"] = False
        config["cardReclaimMinutes"] = 0


class StartupError(Exception):
    """The daemon cannot start; the message says why in one line."""


def setup_logging(settings: dict[str, Any], foreground: bool) -> str:
    """Rotating hippod.log (5 MiB x 3 by default); stderr too in the foreground. Returns the log path."""
    log_file = paths.log_file()
    os.makedirs(os.path.dirname(log_file), mode=0o700, exist_ok=True)
    try:
        handler: logging.Handler = RotatingLog(
            log_file, maxBytes=settings["maxBytes"], backupCount=settings["backups"], encoding="utf-8"
        )
    except OSError as exc:
        if os.path.islink(log_file):
            raise StartupError(f"log file {log_file} is a symbolic link; remove it") from None
        raise StartupError(f"cannot open log file {log_file}: {exc.strerror or exc}") from None
    # The pid tells apart the lines of daemons that share a log (one stopping as the next starts).
    fmt = logging.Formatter(
        "%(asctime)s [%(process)d] %(levelname)s %(name)s: %(message)s", "%Y-%m-%dT%H:%M:%S%z"
    )
    handler.setFormatter(fmt)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    if foreground:
        err = logging.StreamHandler(sys.stderr)
        err.setFormatter(fmt)
        root.addHandler(err)
    level = os.environ.get("HIPPO_LOG_LEVEL", "").strip().lower() or settings["level"]
    root.setLevel(level.upper() if level in LOG_LEVELS else "INFO")
    # aiosqlite logs every statement at debug level; statements can carry memory text.
    logging.getLogger("aiosqlite").setLevel(logging.WARNING)
    return log_file


def ensure_socket_dir(path: str) -> None:
    """Create the socket's folder (0700), or refuse one that another user could have put a socket in.

    Every folder from / down is checked as the client checks it (hippoctl.protocol.ownership), before
    anything is created and again after.
    """
    try:
        ownership.check_folder(path, missing_ok=True)
        os.makedirs(path, mode=0o700, exist_ok=True)
        ownership.check_folder(path)
    except ownership.NotOurs as exc:
        raise StartupError(f"refusing the socket folder {path}: {exc}") from None
    except OSError as exc:  # a folder on the way this user may not look into or create, ...
        where = exc.filename or path
        raise StartupError(f"cannot use the socket folder {path}: {where}: {exc.strerror or exc}") from None


def ensure_private_dir(path: str) -> None:
    """Create a 0700 folder, or refuse one that another user owns or others can open."""
    ensure_socket_dir(path)
    st = os.stat(path)
    if sys.platform != "win32" and st.st_uid != os.getuid():
        raise StartupError(f"runtime dir {path} is owned by uid {st.st_uid}, not by this user")
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise StartupError(
            f"runtime dir {path} is accessible to other users (mode {stat.S_IMODE(st.st_mode):o})"
        )


def started_by_service_manager() -> bool:
    """Whether systemd (Type=notify: it waits for READY=1) or launchd (it relaunches a copy that
    exits non-zero) started this copy."""
    return bool(os.environ.get("NOTIFY_SOCKET")) or os.environ.get("XPC_SERVICE_NAME") == LAUNCHD_LABEL


def already_running(pid: int, sock: str) -> int:
    """Another daemon serves this home: say which, on one line, and exit ALREADY_RUNNING.

    A copy a service manager started (at login, after a client had already started a daemon) exits
    0 instead: the daemon the manager wants is up, so for it this start succeeded.
    """
    if started_by_service_manager():
        log.info("started by the service manager while hippod (pid %d) runs; leaving it to serve", pid)
        print(f"hippod already running (pid {pid})")
        notify(f"READY=1\nSTATUS=hippod already running (pid {pid})")
        return 0
    print(
        f"hippod: already running (pid {pid}, socket {sock}); stop it first: hippoctl daemon stop",
        file=sys.stderr,
    )
    return ALREADY_RUNNING


def run(foreground: bool, team: TeamServe | None = None) -> int:
    os.umask(0o077)
    clock.load_fake_now()
    sock = paths.socket_path()
    # daemon.json is read before logging starts because it holds the log settings.
    daemon_config = load_daemon_config(global_root())
    config = daemon_config.values
    if team is not None:
        team.apply(config)
    log_file = setup_logging(config["log"], foreground)
    notice = daemon_config.notice()
    if notice is not None:
        log.error("%s", notice)
    for warning in daemon_config.warnings:
        log.warning("%s", warning)
    if sys.platform == "win32":
        # A pipe has no folder; its lock file lives in the per-user runtime folder.
        os.makedirs(os.path.dirname(paths.lock_path(sock)), exist_ok=True)
    elif not os.environ.get("HIPPO_SOCKET", "").strip():
        ensure_private_dir(os.path.dirname(sock))
    else:
        ensure_socket_dir(os.path.dirname(sock))
    try:
        claim = instance.claim(global_root(), sock)
    except (LockFileError, instance.Unresponsive) as exc:
        raise StartupError(str(exc)) from None
    if isinstance(claim, instance.Other):
        return already_running(claim.pid, claim.socket)
    try:
        # The daemon's own modules load only now that it holds the lock: a client that spawned it
        # sees a daemon starting, and waits for it, however long a loaded machine takes to load them.
        from hippod.daemon.app import new_state, serve
        from hippod.store.stores import StoreRegistry

        registry = StoreRegistry()
        state = new_state(
            registry, sock, log_file, loss_aversion_from_env(os.environ.get("HIPPO_LOSS_AVERSION_RATIO"))
        )
        state.config_notice = notice
        return asyncio.run(serve(state, config))
    finally:
        claim.release()


def _running_pid(sock: str, timeout: float = 1.0) -> int | None:
    """The pid of the daemon answering on `sock`, or of the one serving this home elsewhere."""
    pid = ping(sock, timeout=timeout)
    if pid is None:
        other = instance.answering(global_root())
        pid = other.pid if other is not None else None
    return pid


def detach() -> int:
    """Start a background daemon and return once it answers on the socket."""
    sock = paths.socket_path()
    pid = _running_pid(sock)
    if pid is not None:
        print(f"hippod already running (pid {pid})")
        return 0
    child = subprocess.Popen(
        daemon_argv(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        **detached_options(),
    )
    deadline = time.monotonic() + DETACH_WAIT_SECONDS
    while time.monotonic() < deadline:
        pid = ping(sock, timeout=0.25)
        if pid is not None:
            print(f"hippod started (pid {pid})")
            return 0
        if child.poll() is not None:
            # It may have exited because another daemon won the race: ask once more.
            pid = _running_pid(sock, timeout=0.25)
            if pid is not None:
                print(f"hippod already running (pid {pid})")
                return 0
            break
        time.sleep(0.05)
    print(
        f"hippod: did not start within {DETACH_WAIT_SECONDS:g} s; see {paths.log_file()}",
        file=sys.stderr,
    )
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hippod", description="The hippo memory daemon.")
    parser.add_argument("--version", action="version", version=f"hippod {__version__}")
    sub = parser.add_subparsers(dest="command")
    run_parser = sub.add_parser("run", help="run the daemon")
    run_parser.add_argument("--foreground", action="store_true", help="also log to stderr")
    run_parser.add_argument(
        "--detach", action="store_true", help="start in the background and return when ready"
    )
    run_parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set an environment variable first (for service managers that pass none, e.g. a Windows task)",
    )
    serve_parser = sub.add_parser(
        "serve",
        help="run a team server: the HTTP API over the team's PostgreSQL database",
        description="Run hippod as a team server: the HTTP API, with every tenant's memories in the "
        "team's PostgreSQL database. Several servers may serve one database side by side.",
    )
    serve_parser.add_argument(
        "--team",
        metavar="DSN",
        help="the database, e.g. postgresql://user@host/db (else daemon.json team.dsn)",
    )
    serve_parser.add_argument("--host", default=None, help="the address to listen on (default 127.0.0.1)")
    serve_parser.add_argument("--port", type=int, default=None, help="the port (default: http.port, 6789)")
    serve_parser.add_argument(
        "--allow-remote", action="store_true", help="listen beyond this machine (every request needs a key)"
    )
    serve_parser.add_argument("--foreground", action="store_true", help="also log to stderr")
    args = parser.parse_args(argv)
    if args.command not in ("run", "serve"):
        parser.print_help()
        return 2
    if args.command == "serve":
        try:
            return run(args.foreground, team=TeamServe(args.team, args.host, args.port, args.allow_remote))
        except StartupError as exc:
            print(f"hippod: {exc}", file=sys.stderr)
            return 1
    for item in args.env:
        name, sep, value = item.partition("=")
        if not sep or not ENV_NAME.fullmatch(name):
            parser.error(f"--env {item}: expected NAME=VALUE")
        os.environ[name] = value
    try:
        return detach() if args.detach else run(args.foreground)
    except StartupError as exc:
        print(f"hippod: {exc}", file=sys.stderr)
        if logging.getLogger().handlers:  # else logging's last resort would print the line again
            log.error("%s", exc)
        return 1
    except Exception as exc:
        # A fault of hippod's own, not of its input: the log keeps the traceback (a spawned
        # daemon's stderr goes nowhere), the terminal gets one line.
        if not logging.getLogger().handlers:
            raise
        log.exception("hippod stopped on an unexpected error")
        print(f"hippod: stopped on an unexpected error ({exc}); see {paths.log_file()}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
