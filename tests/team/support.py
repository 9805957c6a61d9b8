"""Team servers under test: `hippod serve --team` as real subprocesses over the worker's database."""

from __future__ import annotations

from e2e.harness import Hippo
from e2e.sleep_support import make

# bench/private_pg.py: a PostgreSQL cluster a test may stop and start, and a free port (for a server
# that must come back on the same URL); the team bench restarts such a cluster too.
from pg_server import PrivatePostgres as PrivatePostgres
from pg_server import free_port as free_port

from hippod.model.memory import Memory
from hippod.store.postgres import memories as rows
from hippod.store.postgres.pg import Conn, TeamDatabase


def start_server(hippo: Hippo, dsn: str, port: int = 0) -> str:
    """Start a team server of its own instance over `dsn`, its HTTP API on `port` (0: a free one);
    its URL."""
    hippo.env["HIPPO_V1_RPS"] = "0"  # no rate limit: the tests make many calls in a row
    hippo.start(serve=("--team", dsn, "--port", str(port)))
    reply = hippo.json("serve", "--port", str(port))
    assert reply["running"] is True, reply
    return str(reply["url"])


def create_key(hippo: Hippo, tenant: str, role: str = "member") -> str:
    """A new key of `tenant`, minted on the team server through its socket, as its operator does."""
    made = hippo.json("auth", "create", "--tenant", tenant, "--role", role, "--label", "test")
    return str(made["plaintext"])


async def store_rows(db: TeamDatabase, tenant: str, *contents: str) -> list[Memory]:
    """Memories of `tenant` with these contents, inserted in one transaction through the team rows."""
    made = [make(text, tenant_id=tenant) for text in contents]

    async def insert(conn: Conn) -> None:
        for memory in made:
            assert await rows.insert(conn, memory)

    await db.write(tenant, insert)
    return made
