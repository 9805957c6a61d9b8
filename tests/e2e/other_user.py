"""Another OS user on this machine, for the tests of what that user must not reach: `hippo-other`,
made when the tests run as root (as in CI), and programs run as it with runuser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from typing import Any

import pytest

NAME = "hippo-other"

# Sends one HTTP request with the standard library and prints {"status", "body", "headers"}.
_REQUEST = """
import http.client, json, sys, urllib.parse
method, url, headers, body = json.loads(sys.argv[1])
parts = urllib.parse.urlsplit(url)
conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
conn.request(method, parts.path + ("?" + parts.query if parts.query else ""), body, headers)
answer = conn.getresponse()
print(json.dumps({"status": answer.status, "body": answer.read().decode("utf-8", "replace"),
                  "headers": dict(answer.getheaders())}))
"""


@dataclass(frozen=True)
class Answer:
    status: int
    body: str
    headers: dict[str, str]

    def json(self) -> Any:
        return json.loads(self.body)


def _python() -> str:
    """An interpreter the other user can run, of this one's version (so it can load this venv's
    packages): the system's, where this one lives in a private folder."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for folder in ("/usr/bin", "/usr/local/bin"):
        candidate = os.path.join(folder, version)
        if os.access(candidate, os.X_OK):
            return candidate
    pytest.fail(f"no {version} in /usr/bin or /usr/local/bin for {NAME} to run", pytrace=False)


@dataclass(frozen=True)
class OtherUser:
    """Runs programs as `hippo-other`, whose uid is not the daemon's."""

    name: str
    uid: int

    def run(
        self, *argv: str, env: dict[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """`argv` as this user, with a bare environment (plus `env`), from /."""
        pairs = [f"{k}={v}" for k, v in (env or {}).items()]
        command = ["runuser", "-u", self.name, "--", "env", "-i", "PATH=/usr/bin:/bin", *pairs, *argv]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd="/")

    def request(
        self, method: str, url: str, headers: dict[str, str] | None = None, body: str | None = None
    ) -> Answer:
        """One HTTP request sent from a socket of this user."""
        done = self.run(_python(), "-c", _REQUEST, json.dumps([method, url, headers or {}, body]))
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout)
        return Answer(int(got["status"]), str(got["body"]), dict(got["headers"]))

    def python(self, code: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Python code as this user, able to import this virtualenv's packages (the SDK among them)."""
        site = sysconfig.get_paths()["purelib"]
        return self.run(_python(), "-c", code, *args, env={"PYTHONPATH": site})


def ensure() -> OtherUser:
    """The other user, made if missing; skips where it cannot be (not root, and not made before)."""
    try:
        import pwd

        return OtherUser(NAME, pwd.getpwnam(NAME).pw_uid)
    except KeyError:
        pass
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip(f"needs the OS user {NAME}, which only root can make (CI runs as root)")
    import pwd

    # Test workers may race to make it: useradd then finds /etc/passwd locked, or the user made.
    for _ in range(50):
        made = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", NAME],
            capture_output=True,
            text=True,
        )
        try:
            return OtherUser(NAME, pwd.getpwnam(NAME).pw_uid)
        except KeyError:
            time.sleep(0.1)
    pytest.fail(f"could not make the OS user {NAME}: {made.stderr.strip()}", pytrace=False)
