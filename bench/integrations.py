"""Integration verbs bench: `init` on a fresh project and again, `hook install`, `hook list`, `doctor`,
`support-bundle`, and `hippoctl mcp` (launch to the initialize reply, and one tool call).

A measuring tool, not a test: it prints a table and asserts nothing about time. Everything runs in a
fresh HOME and XDG folders under a temporary root, with the daemon on its default socket there, and
with tests/e2e/fakebin's recording stand-ins first on PATH, so no real service manager is touched.
Each project is a git repository with `--commits` commits over the last 30 days (a fifth of them
lessons, up to 40 distinct ones), a CLAUDE.md, an AGENTS.md and an `.opencode/` folder, so init
wires four agents.

Usage: python bench/integrations.py [--runs 10] [--commits 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harness import log, pct

REPO = Path(__file__).resolve().parents[1]
# Lesson subjects distinct enough that learn's duplicate check (overlap above 0.7) keeps each one.
PARTS = ("parser", "scheduler", "exporter", "watcher", "migrator", "renderer", "uploader", "indexer")
FAULTS = (
    "leaked file handles under load",
    "ignored the configured locale",
    "retried forever without backoff",
    "crashed on empty input files",
    "wrote timestamps without timezone",
)
FAKEBIN = REPO / "tests" / "e2e" / "fakebin"


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPPO_")}
    for name in ("home", "data", "state", "cache", "config", "rt"):
        (root / name).mkdir(mode=0o700)
    env.update(
        HOME=str(root / "home"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_RUNTIME_DIR=str(root / "rt"),
        PATH=os.pathsep.join([os.path.dirname(sys.executable), str(FAKEBIN), env.get("PATH", "")]),
        FAKEBIN_LOG=str(root / "fakebin.log"),
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@hippo.invalid",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@hippo.invalid",
    )
    (root / "home" / ".claude").mkdir()
    return env


def _hippoctl() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "hippoctl")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "hippoctl"]


def _project(root: Path, index: int, commits: int, env: dict[str, str]) -> Path:
    """A git repository with `commits` dated commits, oldest first, and three agents' files."""
    folder = root / f"project{index}"
    folder.mkdir()
    (folder / "CLAUDE.md").write_text("# Project\n\nUse tabs.\n")
    (folder / "AGENTS.md").write_text("# Agents\n\nRun make check before committing.\n")
    (folder / ".opencode").mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], env=env, check=True)
    now = time.time()
    # git fast-import: one process for every commit.
    stream = []
    for n in range(commits):
        when = int(now - (commits - n) * 30 * 86400 / (commits + 1))
        lesson = n // 5
        part, fault = PARTS[lesson % len(PARTS)], FAULTS[(lesson // len(PARTS)) % len(FAULTS)]
        subject = f"fix: the {part} {fault}" if n % 5 == 0 else f"feat: add step {n}"
        message = subject.encode()
        stream.append(f"commit refs/heads/main\ncommitter bench <b@h.invalid> {when} +0000\n".encode())
        stream.append(f"data {len(message)}\n".encode() + message + b"\n")
    subprocess.run(
        ["git", "-C", str(folder), "fast-import", "--quiet"], input=b"".join(stream), env=env, check=True
    )
    subprocess.run(["git", "-C", str(folder), "checkout", "-q", "main"], env=env, check=True)
    return folder


def _time(args: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    command = [*_hippoctl(), *args]
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode not in (0, 1) or (done.returncode == 1 and args[0] != "doctor"):
        raise SystemExit(f"hippoctl {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return elapsed


async def _mcp_once(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = _hippoctl()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "mcp"], env=env, cwd=str(cwd))
    start = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        ready = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        result = await session.call_tool("hippo_recall", {"query": "close handle"})
        call = (time.perf_counter() - start) * 1000
        if result.is_error:
            raise SystemExit(f"hippo_recall failed: {result.content}")
    return ready, call


def _row(name: str, values: list[float]) -> str:
    return (
        f"| {name} | {statistics.median(values):,.0f} | {pct(values, 90):,.0f} | {max(values):,.0f} "
        f"| {len(values)} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--commits", type=int, default=200)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hb", dir="/tmp"))
    env = _env(root)
    rows: list[str] = []
    try:
        log(f"making {args.runs} projects of {args.commits} commits")
        projects = [_project(root, i, args.commits, env) for i in range(args.runs)]
        subprocess.run([*_hippoctl(), "daemon", "start"], env=env, cwd=root, check=True, capture_output=True)
        timings: dict[str, list[float]] = {}

        def measure(name: str, run: Callable[[Path], float]) -> None:
            log(name)
            timings[name] = [run(p) for p in projects]

        measure("init, first run (store, git, 4 agents, service)", lambda p: _time(["init"], env, p))
        measure("init, again (changes nothing)", lambda p: _time(["init"], env, p))
        measure(
            "hook install claude-code (installed)",
            lambda p: _time(["hook", "install", "claude-code"], env, p),
        )
        measure("hook list", lambda p: _time(["hook", "list"], env, p))
        measure("doctor", lambda p: _time(["doctor"], env, p))
        out = root / "bundle.json"
        measure("support-bundle", lambda p: _time(["support-bundle", "--out", str(out)], env, p))
        log("hippoctl mcp")
        mcp = [asyncio.run(_mcp_once(env, p)) for p in projects]
        timings["mcp: launch to initialize reply"] = [ready for ready, _ in mcp]
        timings["mcp: hippo_recall round trip"] = [call for _, call in mcp]
        rows = [_row(name, values) for name, values in timings.items()]
        print(f"{args.runs} projects of {args.commits} commits each")
        print("| What | median ms | p90 ms | max ms | runs |")
        print("|---|---|---|---|---|")
        print("\n".join(rows))
    finally:
        subprocess.run([*_hippoctl(), "daemon", "stop"], env=env, cwd=root, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
