"""A PostgreSQL cluster of one run's own (a bench's or a test's), which it may stop and start: the
machine's shared server (127.0.0.1:5432, which others use) is never stopped or restarted.

It is made with the machine's PostgreSQL 15 (initdb into a temporary folder, on a free port, trust
authentication on loopback alone); as root, its programs run as the `postgres` user, since initdb
refuses root."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile

from psycopg.conninfo import make_conninfo

BIN = "/usr/lib/postgresql/15/bin"


def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PrivatePostgres:
    """One cluster in a folder of its own under /tmp, listening on 127.0.0.1:`port` once started."""

    def __init__(self, port: int | None = None) -> None:
        self.port = free_port() if port is None else port
        self.folder = tempfile.mkdtemp(prefix="hpg", dir="/tmp")
        self.data = os.path.join(self.folder, "data")
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self._as:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run("initdb", "-D", self.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(
            [*self._as, os.path.join(BIN, program), *args], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{program} failed: {done.stdout}{done.stderr}"

    def dsn(self, dbname: str = "postgres") -> str:
        return make_conninfo(host="127.0.0.1", port=self.port, user="postgres", dbname=dbname)

    def start(self) -> None:
        """Start the cluster and wait until it accepts connections."""
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off"
        log = os.path.join(self.folder, "postgres.log")
        self._run("pg_ctl", "-D", self.data, "-l", log, "-o", options, "-w", "-t", "120", "start")

    def stop(self) -> None:
        """Stop the cluster as an administrator would for a restart: every session is ended at once."""
        self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "-t", "120", "stop")

    def cleanup(self) -> None:
        """Stop the cluster if it runs, and remove its folder."""
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            subprocess.run(
                [*self._as, os.path.join(BIN, "pg_ctl"), "-D", self.data, "-m", "immediate", "stop"],
                capture_output=True,
                timeout=120,
            )
        shutil.rmtree(self.folder, ignore_errors=True)
