"""Hook command start time: the commands hippod installs, run as an agent host runs them
(`/bin/sh -c '<command>'`, the event's JSON on stdin), by the absolute path `init` now writes and by
the bare `hippoctl` it used to write.

The bare form only starts on a PATH that holds the client's folder, so it runs with
`PATH=<venv>/bin:/usr/bin:/bin` (a host started from the activated virtualenv); the absolute form
runs with `PATH=/usr/bin:/bin`, as a host with its own PATH runs it. Two kinds of run:

- start: the per-prompt command with no daemon to reach (as `doctor` runs it, sealed off): the
  shell, the interpreter, the imports and the arguments, then a refused connection and exit 0;
- per-prompt hook: the same command against a running daemon with 20 pinned memories, a new
  session each run (the block is sent).

Also timed: the shell alone, `python -c "import msgspec"` through it (the floor of any Python hook),
and doctor's Hook commands check over the 11 commands Claude Code, Codex and OpenCode get. Every
kind runs `--runs` times, interleaved so all see the same machine load. A measuring tool, not a
test: it prints a table and asserts nothing about time.

Usage: python bench/hook_start.py [--runs 30] [--pinned 20]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shlex
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from harness import Sandbox, call, make_sandbox, pct, start_daemon, stop_daemon, timed_run

from hippoctl import doctor_hooks
from hippoctl.protocol import messages as m
from hippoctl.protocol.replies_doctor import HookCommand
from hippod.integrations.commands import CLAUDE_HOOKS, CODEX_HOOKS, PROMPT_SUFFIX

BARE_PATH = doctor_hooks.BARE_PATH
SCRIPT = os.path.join(os.path.dirname(sys.executable), "hippoctl")


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    median_ms: float
    p90_ms: float
    runs: int


def _payload(cwd: str) -> bytes:
    session = "bench-" + secrets.token_hex(6)
    fields = {
        "session_id": session,
        "transcript_path": f"/tmp/{session}.jsonl",
        "cwd": cwd,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "how do we ship a release?",
    }
    return json.dumps(fields).encode()


def _shell(command: str) -> list[str]:
    return ["/bin/sh", "-c", command]


def _installed(prefix: str) -> list[HookCommand]:
    """What doctor runs for a full install: Claude Code's 7, Codex's 2, the plugin's 2."""
    found = [HookCommand("claude", spec.command(prefix), "") for spec in CLAUDE_HOOKS]
    found += [HookCommand("codex", spec.command(prefix), "") for spec in CODEX_HOOKS]
    return found + [HookCommand("opencode", f"{prefix} {verb}", "") for verb in ("session-end", "last-sleep")]


def run(runs: int = 30, pinned: int = 20) -> list[Row]:
    """Fill a store with pinned memories, then time each kind of run `runs` times, interleaved."""
    if not os.path.exists(SCRIPT):
        raise SystemExit(f"no hippoctl script beside {sys.executable}: install hippod in this environment")
    sb: Sandbox = make_sandbox(pinned)
    absolute = shlex.quote(SCRIPT)
    prompt = {"absolute": f"{absolute} {PROMPT_SUFFIX}", "bare": f"hippoctl {PROMPT_SUFFIX}"}
    # The host's environment: the sandbox's, with each form's PATH, and spawning left on as a host has it.
    base = {k: v for k, v in sb.env.items() if k != "HIPPO_NO_SPAWN"}
    paths = {"absolute": BARE_PATH, "bare": f"{os.path.dirname(SCRIPT)}:{BARE_PATH}"}
    host = {form: {**base, "PATH": path} for form, path in paths.items()}
    scratch = os.path.join(sb.base, "sealed")
    os.makedirs(scratch)
    sealed = {form: {**doctor_hooks.sealed_env(base, scratch), "PATH": path} for form, path in paths.items()}
    cwd = sb.base
    kinds: dict[str, Callable[[], float]] = {
        "sh -c true": lambda: timed_run(_shell("true"), host["absolute"], cwd, b"")[0],
        "sh -c python -c 'import msgspec'": lambda: timed_run(
            _shell(f"{shlex.quote(sys.executable)} -c 'import msgspec'"), host["absolute"], cwd, b""
        )[0],
    }

    def hook(command: str, env: dict[str, str]) -> Callable[[], float]:
        return lambda: timed_run(_shell(command), env, cwd, _payload(cwd))[0]

    for form in ("absolute", "bare"):
        kinds[f"start, {form}"] = hook(prompt[form], sealed[form])
    for form in ("absolute", "bare"):
        kinds[f"per-prompt hook, {form}"] = hook(prompt[form], host[form])
    commands = _installed(absolute)

    def doctor_check() -> float:
        started = time.perf_counter()
        outcomes = doctor_hooks.run_all([c.command for c in commands], env=base, cwd=cwd)
        if any(o.problem for o in outcomes.values()):
            raise RuntimeError(f"an installed command did not start: {outcomes}")
        return (time.perf_counter() - started) * 1000

    kinds["doctor: 11 commands, 4 at a time"] = doctor_check
    times: dict[str, list[float]] = {name: [] for name in kinds}
    proc = start_daemon(sb)
    try:
        call(sb.sock, sb.home, sb.base, m.Init())
        for n in range(pinned):
            text = f"Release rule {n}: tag {n} is cut from main and signed with the team key"
            reply = call(sb.sock, sb.home, sb.base, m.Remember(content=text, pin=True))
            if isinstance(reply, m.Error):
                raise RuntimeError(f"remember failed: {reply.message}")
        for measure in kinds.values():  # warm the page cache and the store once
            measure()
        for _ in range(runs):
            for name, measure in kinds.items():
                times[name].append(measure())
    finally:
        stop_daemon(proc)
        shutil.rmtree(sb.base, ignore_errors=True)
    return [Row(name, statistics.median(v), pct(v, 90), len(v)) for name, v in times.items()]


def render(rows: list[Row]) -> str:
    width = max(len(r.name) for r in rows)
    lines = [
        f"Hook command start time: {rows[0].runs} runs each, through /bin/sh -c "
        f"(absolute: PATH={BARE_PATH}; bare: the venv's bin/ first)",
        f"{'':{width}}  {'median ms':>10}{'p90 ms':>10}",
    ]
    lines += [f"{r.name:{width}}  {r.median_ms:>10.1f}{r.p90_ms:>10.1f}" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pinned", type=int, default=20)
    args = parser.parse_args()
    print(render(run(args.runs, args.pinned)))


if __name__ == "__main__":
    main()
