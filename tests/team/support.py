"""Team servers under test: `hippod serve --team` as real subprocesses over the worker's database."""

from __future__ import annotations

from e2e.harness import Hippo


def start_server(hippo: Hippo, dsn: str) -> str:
    """Start a team server of its own instance over `dsn`, its HTTP API on a free port; its URL."""
    hippo.env["HIPPO_V1_RPS"] = "0"  # no rate limit: the tests make many calls in a row
    hippo.start(serve=("--team", dsn, "--port", "0"))
    reply = hippo.json("serve", "--port", "0")
    assert reply["running"] is True, reply
    return str(reply["url"])


def create_key(hippo: Hippo, tenant: str, role: str = "member") -> str:
    """A new key of `tenant`, minted on the team server through its socket, as its operator does."""
    made = hippo.json("auth", "create", "--tenant", tenant, "--role", role, "--label", "test")
    return str(made["plaintext"])
