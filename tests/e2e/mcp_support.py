"""Helpers for the `hippoctl mcp` e2e tests: the SDK's own stdio client on `python -m hippoctl mcp`,
and a raw JSON-RPC line client for checking what reaches stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, TextContent

if TYPE_CHECKING:
    from e2e.harness import Hippo

MCP_COMMAND = [sys.executable, "-m", "hippoctl", "mcp"]


@asynccontextmanager
async def mcp_session(
    hippo: Hippo, cwd: str | None = None, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session on `hippoctl mcp` (stdin stays open until the block ends)."""
    params = StdioServerParameters(
        command=MCP_COMMAND[0], args=MCP_COMMAND[1:], env=env or hippo.env, cwd=cwd or hippo.root
    )
    with open(os.path.join(hippo.root, "mcp.err"), "a", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def text_of(result: CallToolResult) -> str:
    """The tool result's text content (one text item)."""
    assert len(result.content) == 1, result.content
    item = result.content[0]
    assert isinstance(item, TextContent), item
    return item.text


async def call_ok(session: ClientSession, tool: str, arguments: dict[str, Any] | None = None) -> str:
    result = await session.call_tool(tool, arguments or {})
    assert not result.is_error, text_of(result)
    return text_of(result)


async def call_error(session: ClientSession, tool: str, arguments: dict[str, Any] | None = None) -> str:
    result = await session.call_tool(tool, arguments or {})
    assert result.is_error, text_of(result)
    return text_of(result)


class RawMcp:
    """`hippoctl mcp` driven by hand: one JSON-RPC message per line on stdin, replies read per line."""

    def __init__(self, hippo: Hippo, cwd: str, env: dict[str, str] | None = None) -> None:
        self.err = open(os.path.join(hippo.root, "mcp-raw.err"), "w+", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(
            MCP_COMMAND,
            cwd=cwd,
            env=env or hippo.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            text=True,
            bufsize=1,
        )
        self.lines: list[str] = []  # every stdout line read so far

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def send_bytes(self, line: bytes) -> None:
        """One line of raw bytes, as a client that sends them would (not UTF-8, not JSON, ...)."""
        assert self.proc.stdin is not None
        self.proc.stdin.flush()
        self.proc.stdin.buffer.write(line + b"\n")
        self.proc.stdin.buffer.flush()

    def handshake(self) -> dict[str, Any]:
        """initialize and notifications/initialized; the initialize result."""
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            }
        )
        init = self.reply()
        assert init["id"] == 1, init
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return dict(init["result"])

    def reply(self) -> dict[str, Any]:
        """The next stdout line, which must be one JSON-RPC message."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"stdout closed; stderr: {self.stderr()}"
        self.lines.append(line)
        message = json.loads(line)
        assert message.get("jsonrpc") == "2.0", line
        return dict(message)

    def close(self, timeout: float = 20) -> int:
        """Close stdin, collect what is left on stdout, and wait for the exit code."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.lines += self.proc.stdout.readlines()
        code = self.proc.wait(timeout=timeout)
        self.proc.stdout.close()
        return code

    def stderr(self) -> str:
        self.err.flush()
        self.err.seek(0)
        return self.err.read()

    def __enter__(self) -> RawMcp:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.err.close()
