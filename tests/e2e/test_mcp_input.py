"""`hippoctl mcp` and what a client may send it that is not a clean JSON-RPC message: bytes that are
not UTF-8 are refused as the CLI refuses them, never stored as U+FFFD, and a line that is not JSON,
or not a JSON-RPC message, is answered with JSON-RPC's error for it instead of dropped."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from e2e.mcp_support import RawMcp
from e2e.sleep_support import project, query

if TYPE_CHECKING:
    from e2e.harness import Hippo


def _call(n: int, tool: str, arguments: dict[str, object]) -> bytes:
    """A tools/call line, as bytes (so a test can put bytes that are not UTF-8 into it)."""
    params = {"name": tool, "arguments": arguments}
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}).encode()


def test_text_that_is_not_utf8_is_refused_not_stored(hippo: Hippo) -> None:
    hippo.start()
    folder, db = project(hippo)
    with RawMcp(hippo, folder) as raw:
        raw.handshake()
        raw.send_bytes(
            _call(2, "hippo_remember", {"text": "the deploy key is BAD"}).replace(b"BAD", b"\xff\xfe")
        )
        refused = raw.reply()
        assert refused["id"] == 2, refused
        assert refused["result"]["isError"] is True, refused
        assert refused["result"]["content"][0]["text"] == (
            "argument text is not valid UTF-8 (byte 0xff at offset 18)"
        )
        # The same call in clean text still works on the same connection.
        raw.send_bytes(_call(3, "hippo_remember", {"text": "the deploy key is fine"}))
        assert raw.reply()["result"]["isError"] is False
        # Bytes that are not UTF-8 outside the arguments: the request is refused with its id.
        raw.send_bytes(_call(4, "hippo_stXtus", {}).replace(b"X", b"\xe4"))
        broken = raw.reply()
        assert broken["id"] == 4 and broken["error"]["code"] == -32600, broken
        assert broken["error"]["message"] == "the request is not valid UTF-8 (byte 0xe4 at offset 80)"
        assert raw.close() == 0
    stored = [text for (text,) in query(db, "SELECT content FROM memories")]
    assert stored == ["the deploy key is fine"]


def test_a_line_that_is_not_a_json_rpc_message_is_answered(hippo: Hippo) -> None:
    hippo.start()
    folder, _ = project(hippo)
    with RawMcp(hippo, folder) as raw:
        raw.handshake()
        bad = [
            (b"this is not json", -32700, "Parse error"),
            (b'{"jsonrpc": "2.0", "id": 7, "method": ', -32700, "Parse error"),
            (b"[]", -32600, "Invalid Request"),  # a batch: MCP has none
        ]
        for n, (line, code, message) in enumerate(bad, 2):
            raw.send_bytes(line)
            raw.send_bytes(json.dumps({"jsonrpc": "2.0", "id": n * 10, "method": "tools/list"}).encode())
            # The answer to the bad line comes first, then the tools.
            assert raw.reply() == {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
            assert raw.reply()["id"] == n * 10
        # JSON, but no JSON-RPC message: -32600, with its id when it has one.
        raw.send_bytes(b'{"jsonrpc": "2.0", "id": 9, "params": {}}')
        assert raw.reply() == {
            "jsonrpc": "2.0",
            "id": 9,
            "error": {"code": -32600, "message": "Invalid Request"},
        }
        # A blank line carries no message: nothing to answer.
        raw.send_bytes(b"")
        raw.send_bytes(json.dumps({"jsonrpc": "2.0", "id": 11, "method": "tools/list"}).encode())
        assert raw.reply()["id"] == 11
        assert raw.close() == 0
        assert "Traceback" not in raw.stderr()
