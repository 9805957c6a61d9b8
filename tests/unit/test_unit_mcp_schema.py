"""The MCP tools' input schemas (built by the SDK from hippoctl/protocol/mcp_specs.py) against the daemon's
argument Structs (hippod/mcp/args.py): the same tools, names, required inputs and defaults."""

from __future__ import annotations

from typing import Any

import msgspec

from hippoctl.args import command as args
from hippoctl.protocol import mcp_specs
from hippoctl.protocol import mcp_tools as mcp_server
from hippoctl.protocol.mcp_names import TOOL_NAMES
from hippod.mcp import args as a

# Inputs whose default the daemon takes from the store's config (memory-model.md §4); the schema
# shows the config's default value.
CONFIG_DEFAULTS = {("hippo_recall", "budget"): 4000, ("hippo_context", "budget"): 1500}


async def _never(tool: str, arguments: dict[str, Any], request: Any) -> str:
    raise AssertionError("no call is made")


def test_every_tool_matches_the_daemons_arguments() -> None:
    tools = {t.name: t for t in (mcp_server.tool(spec, _never) for spec in mcp_specs.TOOLS)}
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
    tool = mcp_server.tool(mcp_specs.TOOLS[0], _never)
    assert mcp_server.CONTEXT_ARG not in tool.parameters["properties"]
    assert tool.context_kwarg == mcp_server.CONTEXT_ARG


def test_the_help_counts_the_tools_of_the_table() -> None:
    # Every signature in mcp_specs is served, in the order of the names table the help counts.
    signatures = {name for name in vars(mcp_specs) if name.startswith("hippo_")}
    assert [spec.__name__ for spec in mcp_specs.TOOLS] == list(TOOL_NAMES)
    assert set(TOOL_NAMES) == signatures
    [line] = [line for line in args.build_parser().format_help().splitlines() if line.split()[:1] == ["mcp"]]
    assert line.endswith(f"MCP server over stdio ({len(mcp_specs.TOOLS)} tools)"), line
