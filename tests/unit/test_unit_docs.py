"""The reference pages stay true to the code: docs/config.md lists every settings key with its
default, and docs/mcp.md every MCP tool with each argument's type and default, and nothing else."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hippoctl.protocol import mcp_specs
from hippoctl.protocol import mcp_tools as mcp_server
from hippod.base.config import DAEMON_DEFAULTS
from hippod.store.config import STORE_DEFAULTS

DOCS = Path(__file__).resolve().parents[2] / "docs"
# A table row whose first cell is a `name` in code: (name, the other cells).
_ROW = re.compile(r"^\| `([^`]+)` \|(.*)\|$")


def _sections(text: str, level: str) -> dict[str, list[str]]:
    """The lines under each heading of `level` (e.g. "## "), by heading, up to the next heading."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("#"):
            current = found.setdefault(line[len(level) :].strip(), []) if line.startswith(level) else None
        elif current is not None:
            current.append(line)
    return found


def _rows(lines: list[str]) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in lines:
        match = _ROW.match(line)
        if match is not None:
            assert match[1] not in rows, f"{match[1]} is listed twice"
            rows[match[1]] = [cell.strip() for cell in match[2].split(" | ")]
    return rows


# --- docs/config.md ---------------------------------------------------------------------------------


def flat(defaults: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Each key as a user sets it: a section's keys one level down (the files merge one level deep)."""
    for key, value in defaults.items():
        if isinstance(value, dict) and value:
            for inner, inner_value in value.items():
                yield f"{key}.{inner}", inner_value
        else:
            yield key, value


def _documented(heading: str) -> dict[str, Any]:
    sections = _sections((DOCS / "config.md").read_text(encoding="utf-8"), "## ")
    rows = _rows(sections[heading])
    defaults: dict[str, Any] = {}
    for key, cells in rows.items():
        shown = re.fullmatch(r"`(.*)`", cells[0])
        assert shown is not None, f"{key}: the default is not one code span: {cells[0]}"
        defaults[key] = json.loads(shown[1])
    return defaults


def test_config_md_lists_every_store_setting_with_its_default() -> None:
    assert _documented("A store's `config.json`") == dict(flat(STORE_DEFAULTS))


def test_config_md_lists_every_daemon_setting_with_its_default() -> None:
    assert _documented("The daemon's `daemon.json`") == dict(flat(DAEMON_DEFAULTS))


# --- docs/mcp.md ------------------------------------------------------------------------------------


def schema_type(prop: dict[str, Any]) -> str:
    """An argument's type in words, from its JSON schema (a null alternative means it may be left out)."""
    if "anyOf" in prop:
        kinds = [schema_type(p) for p in prop["anyOf"] if p.get("type") != "null"]
        return " or ".join(kinds)
    if "enum" in prop:
        return "one of " + ", ".join(str(v) for v in prop["enum"])
    if prop.get("type") == "array":
        return f"list of {schema_type(prop['items'])}s"
    return str(prop["type"])


def schema_default(name: str, schema: dict[str, Any]) -> str:
    if name in schema.get("required", []):
        return "required"
    return f"`{json.dumps(schema['properties'][name]['default'])}`"


async def _never(tool: str, arguments: dict[str, Any], request: Any) -> str:
    raise AssertionError("no call is made")


def tool_schemas() -> dict[str, dict[str, Any]]:
    """Each tool's input schema as `hippoctl mcp` announces it."""
    tools = (mcp_server.tool(spec, _never) for spec in mcp_specs.TOOLS)
    return {t.name: t.parameters for t in tools}


def test_mcp_md_lists_every_tool_and_argument_with_its_type_and_default() -> None:
    sections = _sections((DOCS / "mcp.md").read_text(encoding="utf-8"), "### ")
    tool_heading = re.compile(r"`(\w+)`")
    documented = {
        match[1]: _rows(lines)
        for heading, lines in sections.items()
        if (match := tool_heading.fullmatch(heading))
    }
    schemas = tool_schemas()
    assert set(documented) == set(schemas)
    for tool, schema in schemas.items():
        properties = schema["properties"]
        expected = {name: [schema_type(p), schema_default(name, schema)] for name, p in properties.items()}
        assert {name: cells[:2] for name, cells in documented[tool].items()} == expected, tool
