"""Per-prompt hook bench: `hippoctl context --pinned-only --include-recent 5 --format additional-context`
run as Claude Code runs it (a fresh process, a UserPromptSubmit payload on stdin) against a global store of
10k memories with 20 pinned.

A measuring tool, not a test: it prints a table and asserts nothing about time. Wall times are of the
whole process, beside `python -c "import msgspec"` timed in the same run, interleaved so both see the
same machine load. Bytes are what the hook prints over one 50-prompt session, skip-unchanged on and off.

Usage: python bench/prompt_hook.py [--memories 10000] [--pinned 20] [--runs 100] [--prompts 50]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import sys
import time
from dataclasses import dataclass

from clients import remember_concurrent
from corpus import make_corpus, make_memories
from harness import Sandbox, call, make_sandbox, pct, start_daemon, stop_daemon, timed_run

from hippoctl.protocol import messages as m

HOOK = ("context", "--pinned-only", "--include-recent", "5", "--format", "additional-context")
SEED = 6
CLIENTS = 4


@dataclass(frozen=True, slots=True)
class Timing:
    median_ms: float
    p99_ms: float
    runs: int


@dataclass(frozen=True, slots=True)
class PromptHookResult:
    memories: int
    pinned: int
    baseline: Timing  # python -c "import msgspec"
    changed: Timing  # a block sent (a new session each run)
    skipped: Timing  # an unchanged block skipped
    prompts: int
    bytes_skip_on: int
    sends_skip_on: int
    bytes_skip_off: int
    sends_skip_off: int
    block_chars: int


def _hook_command() -> list[str]:
    """The installed `hippoctl` script beside this interpreter (what a host runs), else `python -m`."""
    script = os.path.join(os.path.dirname(sys.executable), "hippoctl")
    return [script, *HOOK] if os.path.exists(script) else [sys.executable, "-m", "hippoctl", *HOOK]


def _payload(cwd: str, session: str, n: int) -> bytes:
    fields = {
        "session_id": session,
        "transcript_path": f"/tmp/{session}.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": f"prompt number {n}: why does the parser fail on nested lists?",
    }
    return json.dumps(fields).encode()


def _write_config(sb: Sandbox, skip_unchanged: bool) -> None:
    config = {"embeddings": {"enabled": False}, "pinnedInject": {"skipUnchanged": skip_unchanged}}
    with open(os.path.join(sb.home, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)


def _fill(sb: Sandbox, count: int, pinned: int) -> float:
    """`count` memories through the running daemon, the last `pinned` of them pinned; returns the seconds."""
    texts = make_memories(make_corpus(), count, SEED)
    started = time.perf_counter()
    remember_concurrent(sb, texts[: count - pinned], CLIENTS)
    for content, tags in texts[count - pinned :]:
        reply = call(sb.sock, sb.home, sb.base, m.Remember(content=content, tags=tags, pin=True))
        if isinstance(reply, m.Error):
            raise RuntimeError(f"remember failed: {reply.message}")
    return time.perf_counter() - started


def _timing(values: list[float]) -> Timing:
    return Timing(statistics.median(values), pct(values, 99), len(values))


def _session(sb: Sandbox, prompts: int) -> tuple[int, int]:
    """(bytes printed, prompts that printed) over one session of `prompts` prompts."""
    session = "bench-" + secrets.token_hex(4)
    total = sends = 0
    for n in range(prompts):
        out = timed_run(_hook_command(), sb.env, sb.base, _payload(sb.base, session, n))[1].stdout
        total += len(out)
        sends += bool(out)
    return total, sends


def run(
    memories_count: int = 10_000, pinned: int = 20, runs: int = 100, prompts: int = 50
) -> PromptHookResult:
    """Build the store, time the hook and the baseline, count the bytes of a session both ways."""
    sb = make_sandbox(memories_count)
    try:
        _write_config(sb, skip_unchanged=True)
        proc = start_daemon(sb)
        call(sb.sock, sb.home, sb.base, m.Init())
        _fill(sb, memories_count, pinned)
        try:
            hook, env = _hook_command(), sb.env
            baseline_cmd = [sys.executable, "-c", "import msgspec"]
            # A first run opens the store and warms the page cache.
            timed_run(hook, env, sb.base, _payload(sb.base, "warm", 0))
            base: list[float] = []
            changed: list[float] = []
            skipped: list[float] = []
            session = "bench-skip-" + secrets.token_hex(4)
            timed_run(hook, env, sb.base, _payload(sb.base, session, 0))
            while len(changed) < runs or len(skipped) < runs:
                base.append(timed_run(baseline_cmd, env, sb.base)[0])
                if len(changed) < runs:
                    fresh = _payload(sb.base, "bench-" + secrets.token_hex(6), 0)
                    took, done = timed_run(hook, env, sb.base, fresh)
                    if not done.stdout:
                        raise RuntimeError("a fresh session printed no block")
                    changed.append(took)
                took, done = timed_run(hook, env, sb.base, _payload(sb.base, session, len(skipped) + 1))
                if not done.stdout:
                    skipped.append(took)
            line = timed_run(hook, env, sb.base, _payload(sb.base, "bench-size", 0))[1].stdout
            block_chars = len(json.loads(line)["hookSpecificOutput"]["additionalContext"])
            on_bytes, on_sends = _session(sb, prompts)
        finally:
            stop_daemon(proc)
        _write_config(sb, skip_unchanged=False)
        proc = start_daemon(sb)
        try:
            off_bytes, off_sends = _session(sb, prompts)
        finally:
            stop_daemon(proc)
    finally:
        shutil.rmtree(sb.base, ignore_errors=True)
    return PromptHookResult(
        memories=memories_count,
        pinned=pinned,
        baseline=_timing(base),
        changed=_timing(changed),
        skipped=_timing(skipped),
        prompts=prompts,
        bytes_skip_on=on_bytes,
        sends_skip_on=on_sends,
        bytes_skip_off=off_bytes,
        sends_skip_off=off_sends,
        block_chars=block_chars,
    )


def render(result: PromptHookResult) -> str:
    """The figures as a text table, with the targets (median ≤ 2× baseline, p99 ≤ 150 ms)."""
    r = result
    target = 2 * r.baseline.median_ms
    lines = [
        f"Per-prompt hook: {r.memories:,} memories, {r.pinned} pinned, {r.changed.runs} runs each "
        f"(block {r.block_chars:,} chars)",
        f"{'':28}{'median ms':>10}{'p99 ms':>10}  target",
        f"{'python -c import msgspec':28}{r.baseline.median_ms:>10.1f}{r.baseline.p99_ms:>10.1f}",
    ]
    for name, t in (("hook, block changed (sent)", r.changed), ("hook, block unchanged (skip)", r.skipped)):
        ok = "met" if t.median_ms <= target and t.p99_ms <= 150 else "MISSED"
        goal = f"median ≤ {target:.1f}, p99 ≤ 150: {ok}"
        lines.append(f"{name:28}{t.median_ms:>10.1f}{t.p99_ms:>10.1f}  {goal}")
    lines += [
        f"Bytes printed over a {r.prompts}-prompt session:",
        f"  skip-unchanged on : {r.bytes_skip_on:>9,} bytes in {r.sends_skip_on} sends",
        f"  skip-unchanged off: {r.bytes_skip_off:>9,} bytes in {r.sends_skip_off} sends",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--pinned", type=int, default=20)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--prompts", type=int, default=50)
    args = parser.parse_args()
    print(render(run(args.memories, args.pinned, args.runs, args.prompts)))


if __name__ == "__main__":
    main()
