"""The Windows suite's harness: a private home, profile and local app-data folder per test, and the
real `hippoctl` and `hippod` run as the Windows interpreter runs them (the client spawns its daemon
with pythonw.exe, detached). Every test here is marked `windows`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# Generous: Wine on a loaded two-core machine starts a process in a second or more.
TIMEOUT = 120.0
SCRUBBED = ("HIPPO_SOCKET", "HIPPO_TENANT", "HIPPO_SESSION_ID", "HIPPO_NO_SPAWN", "HIPPO_LOG_LEVEL")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.windows)


class WinHippo:
    """One user's hippo on Windows: its own HIPPO_HOME, USERPROFILE and LOCALAPPDATA."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = str(root / "home")
        self.profile = str(root / "profile")
        self.local = str(root / "local")
        self.work = str(root / "work")
        for folder in (self.profile, self.local, self.work):
            os.makedirs(folder, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
        env.update(
            HIPPO_HOME=self.home,
            USERPROFILE=self.profile,
            HOME=self.profile,
            LOCALAPPDATA=self.local,
            HIPPO_EMBEDDINGS="off",
        )
        self.env = env

    def ctl(
        self,
        *args: str,
        input: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = TIMEOUT,
    ) -> subprocess.CompletedProcess[str]:
        """Run `python -m hippoctl ARGS` as a host would, its output read as UTF-8."""
        return subprocess.run(
            [sys.executable, "-m", "hippoctl", *args],
            input=input if input is not None else "",
            capture_output=True,
            text=True,
            encoding="utf-8",
            env={**self.env, **(env or {})},
            cwd=self.work,
            timeout=timeout,
            check=False,
        )

    def ok(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        done = self.ctl(*args, **kwargs)
        assert done.returncode == 0, (args, done.returncode, done.stdout, done.stderr)
        return done

    def json(self, *args: str, **kwargs: Any) -> Any:
        return json.loads(self.ok(*args, "--json", **kwargs).stdout)

    def status(self) -> Any:
        return self.json("daemon", "status")

    def stop(self) -> None:
        self.ctl("daemon", "stop")

    def wait_for(self, check: Callable[[], Any], seconds: float = 60.0) -> Any:
        """Poll `check` until it returns something true or the time is up; returns its last value."""
        deadline = time.monotonic() + seconds
        while True:
            value = check()
            if value or time.monotonic() >= deadline:
                return value
            time.sleep(0.25)


@pytest.fixture
def hippo(tmp_path: Path) -> Iterator[WinHippo]:
    """A user's hippo; its daemon, if one started, is stopped at the end."""
    user = WinHippo(tmp_path)
    try:
        yield user
    finally:
        user.stop()
