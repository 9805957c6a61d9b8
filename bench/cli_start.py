"""hippoctl start-up bench: each verb run as a fresh process, as a shell or an agent's hook runs it, against
a running daemon on a small global store.

A measuring tool, not a test: it prints a table and asserts nothing about time. The rounds are interleaved
(every command once per round, beside `python -c "import msgspec"`) so every command sees the same machine
load. A command this client does not know (exit 2 on its first run) is listed as n/a.

Usage: python bench/cli_start.py [--runs 30] [--memories 200]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys

from harness import call, make_sandbox, pct, start_daemon, stop_daemon, timed_run

from hippoctl.protocol import messages as m

BASELINE = "python -c import msgspec"
PROMPT_HOOK = ("context", "--pinned-only", "--include-recent", "5", "--format", "additional-context")
COMMANDS: dict[str, tuple[str, ...]] = {
    "per-prompt hook": PROMPT_HOOK,
    "last-sleep --keep (hook verb)": ("last-sleep", "--keep"),
    "status": ("status",),
    "recall deploy --limit 3": ("recall", "deploy", "--limit", "3"),
    "--version": ("--version",),
    "recall --help": ("recall", "--help"),
    "--help (every verb)": ("--help",),
}


def _hippoctl() -> list[str]:
    """The installed `hippoctl` script beside this interpreter (what a host runs), else `python -m`."""
    script = os.path.join(os.path.dirname(sys.executable), "hippoctl")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "hippoctl"]


def _payload(cwd: str) -> bytes:
    fields = {"session_id": "bench", "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": "why?"}
    return json.dumps(fields).encode()


def run(runs: int, memories: int) -> dict[str, list[float] | None]:
    """Median-ready timings (ms) per command, None for a command this client refuses."""
    sb = make_sandbox(memories)
    proc = start_daemon(sb)
    try:
        for n in range(memories):
            text = f"deploy note {n}: the staging cache must be flushed after migration step {n}"
            call(sb.sock, sb.home, sb.base, m.Remember(content=text, pin=n < 5))
        commands = {BASELINE: [sys.executable, "-c", "import msgspec"]}
        commands.update({name: [*_hippoctl(), *argv] for name, argv in COMMANDS.items()})
        stdin = {name: _payload(sb.base) if argv == PROMPT_HOOK else b"" for name, argv in COMMANDS.items()}
        times: dict[str, list[float] | None] = {}
        for name, command in commands.items():  # a first run warms the caches and finds refused commands
            _, done = timed_run(command, sb.env, sb.base, stdin.get(name), check=False)
            times[name] = None if done.returncode == 2 else []
        for _ in range(runs):
            for name, command in commands.items():
                found = times[name]
                if found is not None:
                    found.append(timed_run(command, sb.env, sb.base, stdin.get(name), check=False)[0])
        return times
    finally:
        stop_daemon(proc)
        shutil.rmtree(sb.base, ignore_errors=True)


def render(times: dict[str, list[float] | None], runs: int) -> str:
    """Median and p90 per command, and the median over the baseline run in the same round."""
    base = times[BASELINE] or []
    lines = [f"hippoctl start-up, {runs} runs each (fresh process, wall ms)"]
    lines.append(f"{'':32}{'median':>8}{'p90':>8}{'over baseline':>15}")
    for name, values in times.items():
        if not values:
            lines.append(f"{name:32}{'n/a':>8}")
            continue
        over = statistics.median(v - b for v, b in zip(values, base, strict=True))
        extra = f"{over:>15.1f}" if name != BASELINE else ""
        lines.append(f"{name:32}{statistics.median(values):>8.1f}{pct(values, 90):>8.1f}{extra}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--memories", type=int, default=200)
    opts = parser.parse_args()
    print(render(run(opts.runs, opts.memories), opts.runs))


if __name__ == "__main__":
    main()
