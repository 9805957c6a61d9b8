"""The scaling curve: what recall, remember, import, sleep, memory and disk cost at 1k, 10k, 100k and 1M.

A measuring tool, not a test: it prints plain-text tables and asserts nothing about time. For each
size it starts a daemon in a fresh sandbox and fills the global store by `import --markdown` of
generated files: the perf bench's Zipf corpus (corpus.py), one bullet a memory under a heading every
49 bullets, in parts of at most PART lines, each part imported alone and its markdown mirrors
waited for (so each part's import rate is that of a store of that size, and the mirror thread's
time is its own). The last fifth of the memories (at most BUSY_MAX) is imported while a second
thread sends recalls back to back (ingest_import's recall loop, limit 5), which go on until that
import's mirrors are on disk. Then, on the filled store:

- recall p50/p99 with nothing else running (the perf bench's 200 queries, clients.socket_recalls);
- the daemon's RSS, its peak since start (VmHWM: the fill), the store's size on disk and its files;
- the first sleep, timed as sleep_perf times it (peak RSS from VmHWM reset by clear_refs just
  before the request, read once the daemon is idle again);
- remember/s over 4 connections (clients.remember_concurrent) of REMEMBER_NEW new memories;
- the daily sleep that follows them.

Then, with the daemon stopped, what the mirrors cost a project that commits them (all of them by
then: the fill's, the sleeps' semantic memories and the remembered ones): the store's mirror
folders are hard-linked into `.hippo/` of a fresh git repo (with hippod's `.hippo/.gitignore`), and
`git status` is timed with them untracked, then `git add` and `git commit`, then `git status` with
them committed. With --layouts, the same mirror texts are also written in two other layouts
(sharded folders of 256 by id, one file per day of memories; mirror_layouts.py) and the same git
steps timed on each. With --mirrors-only, no daemon runs: each size's mirrors are made up in the
mirror format from the corpus, and only the given layouts' writing and git costs are timed.

Usage: python bench/scale.py [--sizes 1000,10000,100000,1000000] [--tmpdir DIR] [--keep]
       [--fill import|remember] [--sleep-timeout 900] [--git-up-to 1000000] [--layouts]
       [--layouts-up-to 100000] [--mirrors-only flat,sharded,per-day] [--reuse SANDBOX]
       [--mirror-layout memory|day]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import ingest_import
import mirror_layouts
import sleep_perf
from clients import CONCURRENT_CLIENTS, remember_concurrent, socket_recalls
from corpus import TEXT_SEED, Corpus, make_corpus, make_memories, make_queries
from harness import (
    Sandbox,
    count_mirrors,
    kill_all_daemons,
    log,
    make_sandbox,
    measure_disk,
    pct,
    proc_status_kb,
    sandbox_at,
    start_daemon,
    stop_daemon,
    wait_for_mirrors,
)

PART = 100_000
BUSY_MAX = 50_000
IMPORT_AFTER_REMEMBER = 10_000
REMEMBER_NEW = 5_000
HEADING_EVERY = 49
MIRROR_TIMEOUT = 3_600.0


@dataclass
class SizeFigures:
    size: int
    stored: int = 0
    fill_s: float = 0.0
    fill_imported: int = 0
    fill_remember: float = float("nan")  # --fill remember: memories/s over all the remember parts
    fill_remember_last: float = float("nan")
    fill_rate: float = 0.0
    last_part_rate: float = 0.0
    mirrors_s: float = 0.0  # all parts: from each import's reply until its mirrors are on disk
    busy_rate: float = 0.0
    busy_p50: float = float("nan")
    busy_p99: float = float("nan")
    busy_max: float = float("nan")
    busy_n: int = 0
    after_p99: float = float("nan")
    recall_p50: float = float("nan")
    recall_p99: float = float("nan")
    rss_mb: float = 0.0
    fill_peak_mb: float = 0.0
    db_mb: float = 0.0
    mirror_files: int = 0
    mirror_mb: float = 0.0
    inodes: int = 0
    remember_rate: float = float("nan")
    first_s: float = float("nan")
    first_peak_mb: float = float("nan")
    first_note: str = ""
    daily_s: float = float("nan")
    daily_peak_mb: float = float("nan")
    rss_end_mb: float = float("nan")
    parts: list[str] = field(default_factory=list)
    git: list[str] = field(default_factory=list)
    load: str = ""


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def write_markdown(path: str, items: list[tuple[str, list[str]]], section: int) -> int:
    """The memories as bullets, a heading every HEADING_EVERY; returns the next section number."""
    with open(path, "w", encoding="utf-8") as handle:
        for n, (text, _) in enumerate(items):
            if n % HEADING_EVERY == 0:
                handle.write(f"## Section {section}\n")
                section += 1
            handle.write(f"- {text}\n")
    return section


def _import_part(sb: Sandbox, path: str) -> tuple[float, int]:
    started = time.perf_counter()
    reply = ingest_import._import(sb.sock, sb.home, sb.base, path)
    wall = time.perf_counter() - started
    return wall, int(reply.data["imported"]) if isinstance(reply.data, dict) else 0


def fill_steps(size: int, mode: str) -> list[tuple[str, int]]:
    """What fills a store of `size`: (how, lines) in order."""
    if mode == "remember":
        imports = min(IMPORT_AFTER_REMEMBER, size // 4)
        quiet = size - 2 * imports
        parts = [("remember", min(PART, quiet - at)) for at in range(0, quiet, PART)]
        return [*parts, ("alone", imports), ("with recalls", imports)]
    busy = max(100, min(BUSY_MAX, size // 5))
    quiet = size - busy
    return [("alone", min(PART, quiet - at)) for at in range(0, quiet, PART)] + [("with recalls", busy)]


def fill(
    sb: Sandbox,
    fig: SizeFigures,
    corpus: Corpus,
    queries: list[str],
    steps: list[tuple[str, int]],
    first: int = 0,
) -> None:
    """Run the steps (remember or import, `lines` memories each); step i's memories are corpus seed i."""
    section = 1000 * first
    remembered = remember_s = 0.0
    for index, (how, lines) in enumerate(steps):
        items = make_memories(corpus, lines, TEXT_SEED + 1000 * (first + index))
        path = os.path.join(sb.base, "part.md")
        stop = threading.Event()
        during: list[float] = []
        recaller = threading.Thread(
            target=ingest_import._recalls, args=(sb.sock, sb.home, sb.base, queries, stop, during)
        )
        if how == "with recalls":
            recaller.start()
        before = fig.stored
        if how == "remember":
            started = time.perf_counter()
            remember_concurrent(sb, items, CONCURRENT_CLIENTS)
            wall, imported = time.perf_counter() - started, lines
            remembered += lines
            remember_s += wall
            fig.fill_remember_last = lines / wall
        else:
            section = write_markdown(path, items, section)
            wall, imported = _import_part(sb, path)
            os.unlink(path)
        fig.stored += imported
        busy_n = len(during)
        mirrors_s, missing = wait_for_mirrors(sb.home, fig.stored, timeout=MIRROR_TIMEOUT)
        if missing:
            log(f"{missing} mirrors still missing after {MIRROR_TIMEOUT:g} s")
        if how == "with recalls":
            stop.set()
            recaller.join()
            busy_times, after = during[:busy_n], during[busy_n:]
            fig.busy_rate = imported / wall
            fig.busy_p50, fig.busy_p99 = pct(busy_times, 50), pct(busy_times, 99)
            fig.busy_max, fig.busy_n = max(busy_times, default=float("nan")), busy_n
            fig.after_p99 = pct(after, 99)
        elif how == "alone":
            fig.fill_s += wall
            fig.fill_imported += imported
            fig.last_part_rate = imported / wall
        fig.mirrors_s += mirrors_s
        fig.parts.append(
            f"{fig.size:>9}  {before:>9}  {lines:>7}  {imported:>7}  {how:<12}  {wall:>8.2f}"
            f"  {imported / wall:>8.0f}  {mirrors_s:>9.1f}  {_load():>16}"
        )
        log(f"size {fig.size}: part {index + 1}/{len(steps)} {how}: {imported} in {wall:.1f} s")
    fig.fill_rate = fig.fill_imported / fig.fill_s if fig.fill_s else float("nan")
    fig.fill_remember = remembered / remember_s if remember_s else float("nan")


def run_size(size: int, args: argparse.Namespace) -> SizeFigures:
    fig = SizeFigures(size)
    corpus = make_corpus()
    queries = make_queries(corpus)
    sb = sandbox_at(args.reuse) if args.reuse else make_sandbox(size, args.tmpdir)
    if args.mirror_layout != "memory":
        with open(os.path.join(sb.home, "config.json"), encoding="utf-8") as handle:
            config = json.load(handle)
        config["mirrors"] = {"layout": args.mirror_layout}
        with open(os.path.join(sb.home, "config.json"), "w", encoding="utf-8") as handle:
            json.dump(config, handle)
    log(f"size {size}: sandbox {sb.base}, load {_load()}")
    try:
        proc = start_daemon(sb)
        if args.reuse:
            fig.stored = count_mirrors(sb.home)
        else:
            fill(sb, fig, corpus, queries, fill_steps(size, args.fill))
        sleep_perf._wait_idle(proc.pid)
        fig.fill_peak_mb = proc_status_kb(proc.pid, "VmHWM") / 1024
        times, _ = socket_recalls(sb, queries)
        fig.recall_p50, fig.recall_p99 = pct(times, 50) * 1000, pct(times, 99) * 1000
        fig.rss_mb = proc_status_kb(proc.pid, "VmRSS") / 1024
        disk = measure_disk(sb.home)
        fig.db_mb = (disk.db_bytes + disk.wal_bytes) / 2**20
        fig.mirror_files, fig.mirror_mb = disk.mirror_files, disk.mirror_alloc / 2**20
        fig.inodes = mirror_layouts.count_inodes(sb.home)
        log(f"size {size}: recall p50 {fig.recall_p50:.1f} ms, p99 {fig.recall_p99:.1f} ms")
        sleep_perf._reset_peak(proc.pid)
        try:
            fig.first_s, _ = sleep_perf._sleep(sb.sock, sb.home, sb.base, args.sleep_timeout)
        except TimeoutError:
            fig.first_note = f"no reply within {args.sleep_timeout:g} s"
            log(f"size {size}: first sleep: {fig.first_note}")
            return fig
        sleep_perf._wait_idle(proc.pid)
        fig.first_peak_mb = proc_status_kb(proc.pid, "VmHWM") / 1024
        log(f"size {size}: first sleep {fig.first_s:.1f} s, peak {fig.first_peak_mb:.0f} MB")
        new = make_memories(corpus, min(REMEMBER_NEW, size // 2), TEXT_SEED + size + 1)
        fig.remember_rate = remember_concurrent(sb, new, CONCURRENT_CLIENTS)
        sleep_perf._wait_idle(proc.pid)
        sleep_perf._reset_peak(proc.pid)
        fig.daily_s, _ = sleep_perf._sleep(sb.sock, sb.home, sb.base, args.sleep_timeout)
        sleep_perf._wait_idle(proc.pid)
        fig.daily_peak_mb = proc_status_kb(proc.pid, "VmHWM") / 1024
        fig.rss_end_mb = proc_status_kb(proc.pid, "VmRSS") / 1024
        log(f"size {size}: remember {fig.remember_rate:.0f}/s, daily sleep {fig.daily_s:.1f} s")
        if args.reuse:
            fill(sb, fig, corpus, queries, [("with recalls", IMPORT_AFTER_REMEMBER)], first=100)
        stop_daemon(proc)
        if size <= args.git_up_to:
            fig.git += mirror_layouts.of_store(sb, fig.size, args.layouts and size <= args.layouts_up_to)
    finally:
        fig.load = _load()
        kill_all_daemons()
        if not args.keep and not args.reuse:
            shutil.rmtree(sb.base, ignore_errors=True)
    return fig


def _num(value: float, digits: int = 1) -> str:
    return "-" if value != value else f"{value:,.{digits}f}"


def render(figs: list[SizeFigures]) -> str:
    rows: list[tuple[str, Any]] = [
        ("memories stored by the fill (with --reuse: mirrors found)", lambda f: f"{f.stored:,}"),
        ("recall p50 / p99, idle (ms)", lambda f: f"{_num(f.recall_p50)} / {_num(f.recall_p99)}"),
        ("recall p50 / p99 / max during the last import (ms)",
         lambda f: f"{_num(f.busy_p50)} / {_num(f.busy_p99)} / {_num(f.busy_max, 0)}"),
        ("recalls answered during the last import", lambda f: f"{f.busy_n:,}"),
        ("recall p99 while its mirrors are written (ms)", lambda f: _num(f.after_p99)),
        ("remember/s during the fill, all / last part",
         lambda f: f"{_num(f.fill_remember, 0)} / {_num(f.fill_remember_last, 0)}"),
        ("import alone, all parts (memories/s)", lambda f: _num(f.fill_rate, 0)),
        ("import alone, last part (memories/s)", lambda f: _num(f.last_part_rate, 0)),
        ("import with recalls, last import (memories/s)", lambda f: _num(f.busy_rate, 0)),
        ("mirrors written after the imports (s)", lambda f: _num(f.mirrors_s)),
        ("remember/s, 4 connections", lambda f: _num(f.remember_rate, 0)),
        ("first sleep (s)", lambda f: f.first_note or _num(f.first_s)),
        ("first sleep peak RSS (MB)", lambda f: _num(f.first_peak_mb, 0)),
        ("daily sleep after the remembers (s)", lambda f: _num(f.daily_s)),
        ("daily sleep peak RSS (MB)", lambda f: _num(f.daily_peak_mb, 0)),
        ("daemon RSS after the fill, idle (MB)", lambda f: _num(f.rss_mb, 0)),
        ("daemon peak RSS during the fill (MB)", lambda f: _num(f.fill_peak_mb, 0)),
        ("daemon RSS at the end (MB)", lambda f: _num(f.rss_end_mb, 0)),
        ("hippo.db + wal (MB)", lambda f: _num(f.db_mb, 0)),
        ("mirror files", lambda f: f"{f.mirror_files:,}"),
        ("mirrors on disk, allocated (MB)", lambda f: _num(f.mirror_mb, 0)),
        ("inodes under the store root", lambda f: f"{f.inodes:,}"),
        ("load average at the end (1, 5, 15 min)", lambda f: f.load),
    ]  # fmt: skip
    width = max(len(label) for label, _ in rows)
    cols = [[str(getter(f)) for f in figs] for _, getter in rows]
    colw = [max(len(f"{f.size:,}"), *(len(c[i]) for c in cols)) for i, f in enumerate(figs)]
    lines = [" " * width + "  " + "  ".join(f"{f.size:,}".rjust(w) for f, w in zip(figs, colw, strict=True))]
    for (label, _), values in zip(rows, cols, strict=True):
        lines.append(
            label.ljust(width) + "  " + "  ".join(v.rjust(w) for v, w in zip(values, colw, strict=True))
        )
    lines += ["", "The fill, part by part (mirrors: from the import's reply until its mirrors are on disk):"]
    lines.append(
        f"{'size':>9}  {'stored':>9}  {'lines':>7}  {'new':>7}  {'import':<12}  {'seconds':>8}  {'per s':>8}"
        f"  {'mirrors s':>9}  {'load average':>16}"
    )
    lines += [row for f in figs for row in f.parts]
    git = [row for f in figs for row in f.git]
    if git:
        lines += ["", "Mirrors in a git repo's .hippo/ (seconds; status twice: first run, second run):"]
        lines.append(mirror_layouts.GIT_HEADER)
        lines += git
    return "\n".join(lines)


def mirrors_only(args: argparse.Namespace) -> int:
    print(f"load average at the start (1, 5, 15 min): {_load()}", flush=True)
    labels = [label for label in args.mirrors_only.split(",") if label]
    rows: list[str] = []
    for size in (int(s) for s in args.sizes.split(",") if s.strip()):
        base = tempfile.mkdtemp(prefix=f"hm{size}-", dir=args.tmpdir)
        try:
            texts = mirror_layouts.synthetic_mirrors(size, HEADING_EVERY)
            rows += mirror_layouts.time_layouts(base, size, texts, labels)
        finally:
            if not args.keep:
                shutil.rmtree(base, ignore_errors=True)
    print(mirror_layouts.GIT_HEADER)
    print("\n".join(rows))
    print(f"load average at the end (1, 5, 15 min): {_load()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000,100000,1000000", help="comma-separated store sizes")
    parser.add_argument("--tmpdir", default="/tmp")
    parser.add_argument("--keep", action="store_true", help="keep the sandboxes")
    parser.add_argument("--sleep-timeout", type=float, default=900.0, help="give up on a first sleep after")
    parser.add_argument("--git-up-to", type=int, default=1_000_000, help="git costs up to this size")
    parser.add_argument(
        "--fill", choices=("import", "remember"), default="import",
        help="fill by imports, or by remembers over 4 connections and then two imports",
    )  # fmt: skip
    parser.add_argument(
        "--mirror-layout", choices=("memory", "day"), default="memory",
        help="the store's mirrors.layout (a file per memory, or per layer and day)",
    )  # fmt: skip
    parser.add_argument("--layouts", action="store_true", help="also time sharded and per-day layouts")
    parser.add_argument("--layouts-up-to", type=int, default=100_000, help="--layouts up to this size")
    parser.add_argument(
        "--reuse", metavar="SANDBOX",
        help="measure the store of a kept sandbox (one --sizes) instead of filling one; the import with"
        " recalls comes after the daily sleep; the sandbox is kept",
    )  # fmt: skip
    parser.add_argument(
        "--mirrors-only", metavar="LAYOUTS",
        help="no daemon: write each size's synthetic mirrors in these layouts (e.g. flat,per-day), time git",
    )  # fmt: skip
    args = parser.parse_args(argv)
    os.makedirs(args.tmpdir, exist_ok=True)
    if args.mirrors_only:
        return mirrors_only(args)
    print(f"load average at the start (1, 5, 15 min): {_load()}", flush=True)
    figs: list[SizeFigures] = []
    try:
        for size in (int(s) for s in args.sizes.split(",") if s.strip()):
            figs.append(run_size(size, args))
            print(render(figs[-1:]), "\n", flush=True)
    finally:
        kill_all_daemons()
    print(render(figs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
