"""Recall beside the daemon's background work: the background embedding pass and a sleep.

A measuring tool, not a test: it prints tables and asserts nothing about time. Two parts:

- `build` then `embedding`: a store of --size corpus memories written straight into its database (as
  bench/import_scale.py writes them) and noted as left to embed, so the daemon's background pass
  embeds every one of them once it opens the store, as after an import of that size. While the pass
  is under way, recall through HTTP (`GET /v1/memories`, one keep-alive client), then the same
  query through the socket (a code that embeds the candidates a recall finds without a vector has
  just embedded them for the HTTP one): p50, p99 and max, and the vectors the pass had made.
- `hook`: after `import --markdown` of --notes corpus notes through the daemon, `hippoctl recall`
  run as an agent host runs a hook (`/bin/sh -c`, PATH=/usr/bin:/bin, no XDG_RUNTIME_DIR or
  HIPPO_SOCKET: the client finds the daemon through the home's record), in turn with
  `python -c "import msgspec"` through the same shell. The ratio is of their medians. Three cases:
  the model off (HIPPO_EMBEDDINGS=off in the daemon's environment, so recall runs as without the
  embed extra), the same with sleeps under way (autoSleep's `sleep_store`, sent back to back as
  `sleep` requests), and embeddings on with the extra installed (the background pass over the import
  under way, then done).

Usage: python bench/recall_wait.py build --size 100000 --tmpdir DIR   (prints the store's folder)
       python bench/recall_wait.py embedding --store DIR [--seconds 120] [--daemon-path DIR] [--model-off]
       python bench/recall_wait.py hook [--notes 2000] [--runs 30] [--daemon-path DIR]
(--daemon-path: PYTHONPATH of the daemon and the client, another checkout's code for before/after.)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shlex
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx
import import_scale
import ingest_import
import scale
from corpus import TEXT_SEED, make_corpus, make_memories, make_queries
from harness import (
    BenchError,
    Sandbox,
    call,
    kill_all_daemons,
    log,
    make_sandbox,
    pct,
    sandbox_at,
    start_daemon,
    stop_daemon,
    timed_run,
)

from hippoctl.protocol import messages as m
from hippod.integrations.commands import PROMPT_SUFFIX
from hippod.store.sqlite.embeddings import UNFINISHED_KEY

SCRIPT = os.path.join(os.path.dirname(sys.executable), "hippoctl")
BARE_PATH = "/usr/bin:/bin"
LIMIT = 10
HOOK_QUERY = "why does the parser fail on nested lists after the deploy"


def _config(sb: Sandbox, *, embeddings: bool, auto_sleep: bool) -> None:
    with open(os.path.join(sb.home, "config.json"), "w", encoding="utf-8") as f:
        f.write(
            f'{{"embeddings": {{"enabled": {"true" if embeddings else "false"}}}, '
            f'"autoSleep": {{"enabled": {"true" if auto_sleep else "false"}}}}}\n'
        )


def _vectors(sb: Sandbox) -> int:
    """Vectors stored so far (read-only; 0 before the table exists)."""
    conn = sqlite3.connect(f"file:{os.path.join(sb.home, 'hippo.db')}?mode=ro", uri=True, timeout=30)
    try:
        return int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def _memories(sb: Sandbox) -> int:
    conn = sqlite3.connect(f"file:{os.path.join(sb.home, 'hippo.db')}?mode=ro", uri=True, timeout=30)
    try:
        return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    finally:
        conn.close()


# --- recall during the background embedding -------------------------------------------------------


def build(size: int, tmpdir: str) -> str:
    """A sandbox whose global store holds `size` memories without vectors, noted as left to embed."""
    base = import_scale.build(size, tmpdir)
    sb = sandbox_at(base)
    conn = sqlite3.connect(os.path.join(sb.home, "hippo.db"), isolation_level=None)
    try:
        conn.execute("INSERT INTO meta (key, value) VALUES (?, '1')", (UNFINISHED_KEY,))
    finally:
        conn.close()
    _config(sb, embeddings=True, auto_sleep=False)
    return base


@dataclass
class Waits:
    http: list[float]
    socket: list[float]
    vectors_start: int
    vectors_end: int
    size: int
    seconds: float


def embedding(store: str, seconds: float, daemon_path: str | None, model_off: bool = False) -> Waits:
    """Recall in turn through HTTP and the socket for `seconds` while the background pass embeds
    (with `model_off`, the same on a daemon with HIPPO_EMBEDDINGS=off: no pass, BM25 alone)."""
    copy = tempfile.mkdtemp(prefix="rw", dir=os.path.dirname(store))
    os.rmdir(copy)
    shutil.copytree(store, copy, symlinks=True)
    sb = sandbox_at(copy)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(sb.sock)
    sb.env["HIPPO_V1_RPS"] = "0"
    if daemon_path:
        sb.env["PYTHONPATH"] = daemon_path
    if model_off:
        sb.env["HIPPO_EMBEDDINGS"] = "off"
    queries = make_queries(make_corpus())
    size = _memories(sb)
    proc = start_daemon(sb)
    try:
        served = call(sb.sock, sb.home, sb.base, m.Serve(port=0))
        if not isinstance(served, m.Result):
            raise BenchError(f"serve failed: {served}")
        # The first recall opens the store, which starts the pass; the hybrid ranking starts with
        # its first stored batch.
        call(sb.sock, sb.home, sb.base, m.Recall(query=queries[0], limit=LIMIT, strengthen=False))
        deadline = time.monotonic() + 120
        while _vectors(sb) == 0 and not model_off:
            if time.monotonic() > deadline:
                raise BenchError("the background pass stored no vector within 120 s")
            time.sleep(0.2)
        start_vectors = _vectors(sb)
        http: list[float] = []
        sock: list[float] = []
        with httpx.Client(base_url=served.data["url"], timeout=600) as client:
            until = time.monotonic() + seconds
            n = 0
            while time.monotonic() < until:
                query = queries[n % len(queries)]
                n += 1
                started = time.perf_counter()
                answer = client.get("/v1/memories", params={"q": query, "limit": LIMIT})
                http.append((time.perf_counter() - started) * 1e3)
                if answer.status_code != 200:
                    raise BenchError(f"HTTP recall answered {answer.status_code}: {answer.text[:200]}")
                started = time.perf_counter()
                reply = call(sb.sock, sb.home, sb.base, m.Recall(query=query, limit=LIMIT, strengthen=False))
                sock.append((time.perf_counter() - started) * 1e3)
                if isinstance(reply, m.Error):
                    raise BenchError(f"socket recall failed: {reply.message}")
        end_vectors = _vectors(sb)
    finally:
        stop_daemon(proc)
        shutil.rmtree(copy, ignore_errors=True)
    return Waits(http, sock, start_vectors, end_vectors, size, seconds)


def render_waits(w: Waits, label: str) -> str:
    lines = [
        f"Recall during the background embedding of {w.size:,} memories ({label}; {w.seconds:.0f} s, "
        f"vectors {w.vectors_start:,} → {w.vectors_end:,})",
        f"{'path':<22}{'recalls':>8}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}",
    ]
    for name, times in (("HTTP keep-alive", w.http), ("socket", w.socket)):
        p50, p99 = pct(times, 50), pct(times, 99)
        lines.append(f"{name:<22}{len(times):>8}{p50:>10.1f}{p99:>10.1f}{max(times):>10.1f}")
    return "\n".join(lines)


# --- the hook beside `python -c "import msgspec"` --------------------------------------------------


@dataclass
class HookCase:
    name: str
    base: list[float]
    recall: list[float]
    prompt: list[float]
    note: str = ""


def _ratio(times: list[float], base: list[float]) -> float:
    return statistics.median(times) / statistics.median(base)


def _host_env(sb: Sandbox, daemon_path: str | None) -> dict[str, str]:
    """The environment an agent host gives a hook: the sandbox's home, a bare PATH, no runtime dir."""
    # Nor PYTHONDONTWRITEBYTECODE (a test runner's setting, no host's): with it, every run would
    # compile the client's modules anew, as an installed client never does.
    dropped = ("XDG_RUNTIME_DIR", "HIPPO_SOCKET", "HIPPO_NO_SPAWN", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in sb.env.items() if k not in dropped}
    # The client's fallback socket folder then lies in the sandbox, not in the machine's /tmp.
    env["TMPDIR"] = os.path.join(sb.base, "tmp")
    os.makedirs(env["TMPDIR"], mode=0o700, exist_ok=True)
    env["PATH"] = BARE_PATH
    if daemon_path:
        env["PYTHONPATH"] = daemon_path
    else:
        env.pop("PYTHONPATH", None)
    return env


def _payload(cwd: str) -> bytes:
    """A UserPromptSubmit event of a new session, so the per-prompt hook sends its block."""
    session = "bench-" + secrets.token_hex(6)
    fields = {"session_id": session, "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": HOOK_QUERY}
    return json.dumps(fields).encode()


def _runs(
    sb: Sandbox, env: dict[str, str], runs: int, busy: Callable[[], bool]
) -> tuple[list[float], list[float], list[float]]:
    """`runs` times the baseline, `recall` and the per-prompt hook in turn, only while `busy()` holds."""
    script = shlex.quote(SCRIPT)
    recall = ["/bin/sh", "-c", f"{script} recall {shlex.quote(HOOK_QUERY)}"]
    prompt = ["/bin/sh", "-c", f"{script} {PROMPT_SUFFIX}"]
    floor = ["/bin/sh", "-c", f"{shlex.quote(sys.executable)} -c 'import msgspec'"]
    base: list[float] = []
    recalls: list[float] = []
    prompts: list[float] = []
    timed_run(recall, env, sb.base)  # the page cache, the store's first open
    while len(base) < runs:
        if not busy():
            raise BenchError("the background work ended before the runs did: give fewer --runs")
        base.append(timed_run(floor, env, sb.base)[0])
        recalls.append(timed_run(recall, env, sb.base)[0])
        prompts.append(timed_run(prompt, env, sb.base, _payload(sb.base))[0])
    return base, recalls, prompts


def _hook_sandbox(notes: int, daemon_path: str | None, *, embeddings: bool) -> tuple[Sandbox, str]:
    sb = make_sandbox(notes)
    _config(sb, embeddings=embeddings, auto_sleep=False)
    if daemon_path:
        sb.env["PYTHONPATH"] = daemon_path
    if not embeddings:
        sb.env["HIPPO_EMBEDDINGS"] = "off"
    path = os.path.join(sb.base, "notes.md")
    scale.write_markdown(path, make_memories(make_corpus(), notes, TEXT_SEED), 1)
    return sb, path


class Repeat:
    """Send one request back to back from a thread until stopped; counts the replies."""

    def __init__(self, sb: Sandbox, body: m.Body) -> None:
        self.done = 0
        self._stop = threading.Event()
        self._busy = threading.Event()

        def loop() -> None:
            while not self._stop.is_set():
                self._busy.set()
                call(sb.sock, sb.home, sb.base, body, timeout=600)
                self.done += 1

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()
        self._busy.wait()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def hook(notes: int, runs: int, daemon_path: str | None) -> list[HookCase]:
    cases: list[HookCase] = []
    sb, path = _hook_sandbox(notes, daemon_path, embeddings=False)
    proc = start_daemon(sb)
    try:
        ingest_import._import(sb.sock, sb.home, sb.base, path)
        env = _host_env(sb, daemon_path)
        times = _runs(sb, env, runs, lambda: True)
        cases.append(HookCase("model off, no sleep", *times))
        log(render_hook(cases, notes, "so far"))
        sleeps = Repeat(sb, m.Sleep())
        try:
            time.sleep(0.5)
            times = _runs(sb, env, runs, lambda: True)
        finally:
            sleeps.stop()
        cases.append(HookCase("model off, sleep under way", *times, f"{sleeps.done} sleeps"))
    finally:
        stop_daemon(proc)
        shutil.rmtree(sb.base, ignore_errors=True)
    sb, path = _hook_sandbox(notes, daemon_path, embeddings=True)
    proc = start_daemon(sb)
    try:
        ingest_import._import(sb.sock, sb.home, sb.base, path)
        env = _host_env(sb, daemon_path)
        log(f"imported {notes}: {_vectors(sb)} vectors")
        before = _vectors(sb)
        times = _runs(sb, env, runs, lambda: _vectors(sb) < _memories(sb))
        cases.append(
            HookCase("embed extra, pass under way", *times, f"vectors {before:,} → {_vectors(sb):,}")
        )
        log(render_hook(cases, notes, "so far"))
        deadline = time.monotonic() + 900
        while _vectors(sb) < _memories(sb) and time.monotonic() < deadline:
            time.sleep(1)
        times = _runs(sb, env, runs, lambda: True)
        cases.append(HookCase("embed extra, pass done", *times, f"vectors {_vectors(sb):,}"))
    finally:
        stop_daemon(proc)
        shutil.rmtree(sb.base, ignore_errors=True)
    return cases


def render_hook(cases: list[HookCase], notes: int, label: str) -> str:
    lines = [
        f"Hooks as a host runs them, after importing {notes:,} notes ({label}; {len(cases[0].base)} runs "
        "each, in turn): medians in ms, ratio to `python -c 'import msgspec'`",
        f"{'case':<30}{'msgspec':>8}{'recall':>8}{'ratio':>7}{'prompt':>8}{'ratio':>7}  note",
    ]
    for c in cases:
        lines.append(
            f"{c.name:<30}{statistics.median(c.base):>8.1f}{statistics.median(c.recall):>8.1f}"
            f"{_ratio(c.recall, c.base):>7.2f}{statistics.median(c.prompt):>8.1f}"
            f"{_ratio(c.prompt, c.base):>7.2f}  {c.note}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("build", help="a store without vectors, noted as left to embed")
    make.add_argument("--size", type=int, default=100_000)
    make.add_argument("--tmpdir", default="/tmp")
    during = sub.add_parser("embedding", help="recall while the background pass embeds a built store")
    during.add_argument("--store", required=True, help="the folder `build` printed")
    during.add_argument("--seconds", type=float, default=120.0)
    during.add_argument("--daemon-path", help="PYTHONPATH of the daemon: another checkout's hippod")
    during.add_argument("--model-off", action="store_true", help="the control: HIPPO_EMBEDDINGS=off")
    hooked = sub.add_parser("hook", help="`hippoctl recall` as a hook, beside `import msgspec`")
    hooked.add_argument("--notes", type=int, default=2_000)
    hooked.add_argument("--runs", type=int, default=30)
    hooked.add_argument("--daemon-path", help="PYTHONPATH of the daemon and client: another checkout")
    args = parser.parse_args(argv)
    label = f"code of {args.daemon_path}" if getattr(args, "daemon_path", None) else "this checkout"
    try:
        if args.command == "build":
            print(build(args.size, args.tmpdir))
        elif args.command == "embedding":
            waits = embedding(args.store, args.seconds, args.daemon_path, args.model_off)
            print(render_waits(waits, label + (", model off" if args.model_off else "")))
        else:
            print(render_hook(hook(args.notes, args.runs, args.daemon_path), args.notes, label))
    finally:
        kill_all_daemons()
    return 0


if __name__ == "__main__":
    sys.exit(main())
