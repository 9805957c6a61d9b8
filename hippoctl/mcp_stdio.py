"""The stdio transport of `hippoctl mcp`: the SDK's, with each line of stdin screened first.

The SDK decodes stdin as UTF-8 with errors="replace", so text that is not UTF-8 would reach a tool as
U+FFFD and be stored, and it drops a line that is no JSON-RPC message without a word. Here stdin is
read as bytes, a line at a time, and what the SDK would get wrong is answered here instead:
- bytes that are not UTF-8: a tools/call is answered with a tool error that names the argument, as
  the CLI refuses such text (`argument text is not valid UTF-8 (byte 0xff at offset 18)`); another
  request gets -32600 Invalid Request with its id; a line whose id cannot be read, -32700;
- not JSON: -32700 Parse error, id null (JSON-RPC 2.0 §5.1);
- JSON but no JSON-RPC message (a batch included: MCP has none): -32600 Invalid Request, with its
  id when one can be read;
- a blank line carries no message and is passed over.
Every other line goes to the SDK's reader as it was sent. The SDK writes stdout as before, from its
own copy of fd 1, with fd 1 itself pointed at stderr while it serves.
"""

from __future__ import annotations

import contextlib
import json
from typing import IO, Any, cast

import anyio
import mcp_types as types
import pydantic_core
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from hippoctl.protocol import validate

Answer = types.JSONRPCResponse | types.JSONRPCError
RequestId = int | str | None


def screen(raw: bytes) -> str | Answer | None:
    """One line of stdin: the text to hand to the SDK, the answer to send instead, or None (blank)."""
    if not raw.strip():
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _not_utf8(raw)
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except pydantic_core.ValidationError:
        try:
            data = pydantic_core.from_json(text)
        except ValueError:
            return _error(None, types.PARSE_ERROR, "Parse error")
        return _error(_id_of(data), types.INVALID_REQUEST, "Invalid Request")
    return text


def _error(request_id: RequestId, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def _id_of(data: Any) -> RequestId:
    """A message's id when it has one JSON-RPC allows (a string or an integer), else None."""
    found = data.get("id") if isinstance(data, dict) else None
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


def _not_utf8(raw: bytes) -> Answer:
    """The answer to a line that is not UTF-8 (see the module docstring)."""
    try:
        # Each byte that is not UTF-8 becomes a lone surrogate, which turns back into that byte.
        data = json.loads(raw.decode("utf-8", "surrogateescape"))
    except ValueError:
        return _error(None, types.PARSE_ERROR, "Parse error")
    request_id = _id_of(data)
    if request_id is None:
        return _error(None, types.PARSE_ERROR, "Parse error")
    params = data.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if data.get("method") == "tools/call" and isinstance(arguments, dict):
        for name, value in arguments.items():
            problem = _text_problem(value, f"argument {name}")
            if problem is not None:
                return _tool_error(request_id, problem)
    return _error(request_id, types.INVALID_REQUEST, str(validate.utf8_problem(raw, "the request")))


def _tool_error(request_id: int | str, text: str) -> types.JSONRPCResponse:
    """A tool call's result that is an error (`isError`), as the tools' own refusals are."""
    result = types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
    dumped = result.model_dump(by_alias=True, exclude_unset=True, mode="json")
    return types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=dumped)


def _text_problem(value: Any, what: str) -> str | None:
    """The CLI's words for the first text in a value (a string, or one inside lists and objects) that
    is not UTF-8, with the offset of its first bad byte; None when all of it is."""
    if isinstance(value, str):
        return validate.utf8_problem(value.encode("utf-8", "surrogateescape"), what)
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for item in items:
        problem = _text_problem(item, what)
        if problem is not None:
            return problem
    return None


class ScreenedStdin:
    """What the SDK's stdio reader iterates over in place of stdin: the lines screen() passes; the
    answers it makes instead go out through the server's write stream, once answer_to() names it."""

    def __init__(self, source: IO[bytes]) -> None:
        self._source = anyio.wrap_file(source)
        self._replies: MemoryObjectSendStream[SessionMessage] | None = None
        self._ready = anyio.Event()

    def answer_to(self, replies: MemoryObjectSendStream[SessionMessage]) -> None:
        self._replies = replies
        self._ready.set()

    def __aiter__(self) -> ScreenedStdin:
        return self

    async def __anext__(self) -> str:
        while True:
            raw = await self._source.readline()
            if not raw:
                raise StopAsyncIteration
            seen = screen(raw)
            if isinstance(seen, str):
                return seen
            if seen is not None:
                await self._ready.wait()
                assert self._replies is not None
                # The server has stopped when its stream is closed: the answer has nobody to go to.
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await self._replies.send(SessionMessage(seen))


async def serve(server: MCPServer[Any], source: IO[bytes]) -> None:
    """Serve MCP on `source` (stdin's bytes) and stdout until the client closes stdin: the SDK's
    run_stdio_async with its reader fed by ScreenedStdin."""
    lines = ScreenedStdin(source)
    # The SDK types its stdin as an anyio file of text; it only iterates over it.
    async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (read_stream, write_stream):
        lines.answer_to(write_stream)
        lowlevel = server._lowlevel_server  # what run_stdio_async runs; the SDK has no public handle on it
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
