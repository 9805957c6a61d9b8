"""Programs some tests run that pip does not install: a Chromium or Chrome for the dashboard's browser
tests, and strace for the test that the daemon connects to nothing but loopback.

Each is looked for where it is installed. Where it is not, a run as root installs Debian's package
(once: the first test worker to ask does it under a lock, and the others then find it), and any other
run fails the tests that need it in one line naming the command that installs it: never a skip."""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

# Looked for on PATH in this order; Debian names its package and program `chromium`.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_HINT = "python -m playwright install chromium"
STRACE_HINT = "sudo apt-get install strace"
# Other test runs on the machine may be installing too: apt waits for their lock rather than failing.
APT = ["apt-get", "-q", "-o", "DPkg::Lock::Timeout=600"]


def playwright_chromium() -> str | None:
    """The Chromium Playwright downloaded itself (`playwright install chromium`), if it has."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        path = driver.chromium.executable_path
    return path if os.access(path, os.X_OK) else None


def find_chromium(
    path: str | None = None, bundled: Callable[[], str | None] = playwright_chromium
) -> str | None:
    """The first of CHROMIUM_NAMES on `path` (default: PATH), else Playwright's own; None if neither."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name, path=path)
        if found:
            return found
    return bundled()


def missing(what: str, looked: str, hint: str) -> str:
    """The one line a test that needs `what` fails with, where it cannot be installed."""
    return f"no {what} found ({looked}): install it with `{hint}`"


@contextmanager
def _install_lock() -> Iterator[None]:
    """Held while installing: by one test worker at a time, and one test run on the machine."""
    with open(os.path.join(tempfile.gettempdir(), "hippo-tests-install.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _apt_install(package: str) -> None:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for args in (["update"], ["install", "-y", package]):
        done = subprocess.run([*APT, *args], capture_output=True, text=True, env=env, timeout=1800)
        if done.returncode != 0:
            tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-3:])
            pytest.fail(f"`apt-get {' '.join(args)}` failed: {tail}", pytrace=False)


def ensure(
    what: str,
    find: Callable[[], str | None],
    looked: str,
    package: str,
    hint: str,
    may_install: bool | None = None,
) -> str:
    """The path of `what` as `find` finds it (where it `looked`); when it finds none and `may_install`
    (default: running as root where apt-get is), Debian's `package` is installed first; otherwise
    the test fails, saying `hint` installs it."""
    found = find()
    if found:
        return found
    if may_install is None:
        may_install = os.geteuid() == 0 and shutil.which("apt-get") is not None
    if may_install:
        with _install_lock():
            found = find()  # another worker or run may have installed it while this one waited
            if not found:
                _apt_install(package)
                found = find()
    if not found:
        pytest.fail(missing(what, looked, hint), pytrace=False)
    return found


def ensure_chromium(find: Callable[[], str | None] = find_chromium, may_install: bool | None = None) -> str:
    """The browser the tests drive: the one HIPPO_TEST_CHROMIUM names, else the Chromium or Chrome
    `find` finds (installed first by a root run if there is none, as `ensure` says)."""
    named = os.environ.get("HIPPO_TEST_CHROMIUM")
    if named:
        if not os.access(named, os.X_OK):
            pytest.fail(f"HIPPO_TEST_CHROMIUM names {named}, which is not a program", pytrace=False)
        return named
    looked = f"{', '.join(CHROMIUM_NAMES)} on PATH, or Playwright's own"
    return ensure("Chromium or Chrome", find, looked, "chromium", CHROMIUM_HINT, may_install)


@functools.cache
def chromium() -> str:
    """The browser the tests drive, looked for once per test process."""
    return ensure_chromium()


def ensure_strace(
    find: Callable[[], str | None] = lambda: shutil.which("strace"), may_install: bool | None = None
) -> str:
    """strace's path as `find` finds it (installed first by a root run if missing, as `ensure` says)."""
    return ensure("strace", find, "on PATH", "strace", STRACE_HINT, may_install)


@functools.cache
def strace() -> str:
    """strace's path, looked for once per test process."""
    return ensure_strace()
