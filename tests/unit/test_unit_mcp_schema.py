"""The MCP tools' input schemas (built by the SDK from hippoctl/mcp_specs.py) against the daemon's
argument Structs (hippod/mcp/args.py): the same tools, names, required inputs and defaults."""

from __future__ import annotations

from typing import Any

import msgspec

from hippoctl import mcp_server
from hippod.mcp import args as a

# Inputs whose default the daemon takes from the store's config (memory-model.md §4); the schema
# shows the config's default value.
CONFIG_DEFAULTS = {("hippo_recall", "budget"): 4000, ("hippo_context", "budget"): 1500}


async def _never(tool: str, arguments: dict[str, Any]) -> str:
    raise AssertionError("no call is made")


def test_every_tool_matches_the_daemons_arguments() -> None:
    tools = {t.name: t for t in (mcp_server.tool(spec, _never) for spec in mcp_server.TOOLS)}
    assert set(tools) == set(a.TOOLS)
    for name, kind in a.TOOLS.items():
        schema = tools[name].parameters
        fields = {f.encode_name: f for f in msgspec.structs.fields(kind)}
        assert set(schema["properties"]) == set(fields), name
        assert set(schema.get("required", [])) == {n for n, f in fields.items() if f.required}, name
        for field_name, field in fields.items():
            if field.required:
                continue
            shown = schema["properties"][field_name].get("default")
            expected = CONFIG_DEFAULTS.get((name, field_name), field.default)
            assert shown == expected, (name, field_name)
            if (name, field_name) in CONFIG_DEFAULTS:
                assert field.default is None, (name, field_name)
        assert tools[name].description and "\n\n" not in tools[name].description


def test_the_context_argument_is_not_part_of_the_schema() -> None:
    tool = mcp_server.tool(mcp_server.TOOLS[0], _never)
    assert mcp_server.CONTEXT_ARG not in tool.parameters["properties"]
    assert tool.context_kwarg == mcp_server.CONTEXT_ARG
