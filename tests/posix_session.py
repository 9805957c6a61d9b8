"""Shared test infrastructure of the POSIX suite (tests/conftest.py loads it off Windows).

* A session-wide guard (daemon.md §17): every XDG folder points at a fresh temporary
  directory for the whole run, and the run fails if the real global root, runtime dir or
  log dir was created or modified.
* The e2e `hippo` fixture lives in tests/e2e/conftest.py, its harness in tests/e2e/harness.py.
"""

from __future__ import annotations

import compileall
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator

import pg_server
import pytest
from e2e.harness import SCRUBBED_VARS

XDG_VARS = ("XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The folder of the run's own PostgreSQL (tests/pg_server.py), in the controlling process.
PG_RUN = pytest.StashKey[str | None]()


def pytest_configure(config: pytest.Config) -> None:
    """Compile hippod and hippoctl once, in the controlling process, before any worker starts.

    The suite starts hundreds of daemons and thousands of clients with PYTHONDONTWRITEBYTECODE set,
    so without cached bytecode each of them would compile every module it imports from source.
    """
    if hasattr(config, "workerinput"):
        return
    for package in ("hippod", "hippoctl"):
        compileall.compile_dir(os.path.join(ROOT, package), quiet=1)
    config.stash[PG_RUN] = pg_server.prepare()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked `long` first: the workers are handed them at the start, so that none is left
    running alone at the end of the run while the other workers wait."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Say how the run's own PostgreSQL was started, and how long that took, if one was."""
    folder = config.stash.get(PG_RUN, None)
    line = pg_server.summary(folder) if folder else None
    if line:
        terminalreporter.write_line(line)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the run's own PostgreSQL, if one was started, once every worker is done."""
    folder = config.stash.get(PG_RUN, None)
    if folder:
        pg_server.finish(folder)


# --- the session guard ------------------------------------------------------------------------------


def _snapshot(path: str) -> tuple[bool, int | None]:
    try:
        return True, os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return False, None


def _real_locations() -> dict[str, str]:
    import platformdirs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        return {
            "global root": platformdirs.user_data_dir("hippo", appauthor=False),
            "runtime dir": platformdirs.user_runtime_dir("hippo"),
            "log dir": platformdirs.user_log_dir("hippo"),
        }


@pytest.fixture(scope="session", autouse=True)
def real_dirs_guard() -> Iterator[None]:
    """Point XDG folders at temp dirs for the run; fail if the real hippo folders are touched."""
    locations = _real_locations()  # computed before the environment changes
    before = {name: _snapshot(path) for name, path in locations.items()}
    saved = {name: os.environ.get(name) for name in (*XDG_VARS, *SCRUBBED_VARS)}
    base = tempfile.mkdtemp(prefix="hx", dir="/tmp")
    for name in XDG_VARS:
        folder = os.path.join(base, name.split("_")[1].lower())
        os.makedirs(folder, mode=0o700)
        os.environ[name] = folder
    os.chmod(os.environ["XDG_RUNTIME_DIR"], 0o700)
    for name in SCRUBBED_VARS:
        os.environ.pop(name, None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(base, ignore_errors=True)
    touched = []
    for name, path in locations.items():
        after = _snapshot(path)
        if after != before[name]:
            verb = "created" if not before[name][0] else "modified or removed"
            touched.append(f"{name} {path} was {verb} by the test run")
    if touched:
        pytest.fail("; ".join(touched), pytrace=False)


# --- PostgreSQL, for the team store -----------------------------------------------------------------


@pytest.fixture(scope="session")
def pg_admin_dsn() -> str:
    """The server the team store's tests use (tests/pg_server.py): any database on it will do, as
    each worker makes its own beside it and drops it afterwards."""
    return pg_server.admin_dsn()


@pytest.fixture(scope="session")
def pg_dsn(worker_id: str, pg_admin_dsn: str) -> Iterator[str]:
    """A fresh PostgreSQL database for this worker, dropped at the end of the run.

    If the server HIPPO_TEST_PG names cannot be reached, the tests that need it fail, saying so:
    they are never skipped.
    """
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        admin = psycopg.connect(pg_admin_dsn, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        pytest.fail(f"the team store's tests need PostgreSQL at {pg_admin_dsn}: {exc}", pytrace=False)
    base = str(conninfo_to_dict(pg_admin_dsn).get("dbname") or "postgres")
    name = f"{base}_{worker_id}_{os.getpid()}"[:63]
    with admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield make_conninfo(pg_admin_dsn, dbname=name)
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_fresh_dsn(pg_dsn: str, pg_admin_dsn: str) -> Iterator[str]:
    """A database of the test's own beside the worker's, for a test whose tenant is fixed ("default")."""
    import secrets

    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"{conninfo_to_dict(pg_dsn)['dbname']}_{secrets.token_hex(4)}"[:63]
    with psycopg.connect(pg_admin_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_conninfo(pg_admin_dsn, dbname=name)
    finally:
        with psycopg.connect(pg_admin_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def model_graph() -> str:
    """The model's int8 graph, built once into the session's cache, which the daemons share
    (harness.py), so a daemon's first recall does not wait on building it."""
    from hippod.embed import minilm_model

    return str(minilm_model.graph())
