"""The dashboard in a browser at 1,000 and 100,000 memories: first paint and data drawn per view, page
weight, the JSON routes' own time, and the daemon's RSS with the dashboard open.

A measuring tool, not a test: it prints plain-text tables and asserts nothing about time.

For each size it fills a fresh sandbox's global store (dashboard_data.py: memories written with
hippod's store code, then real sleeps, conflicts and cards through the socket), opens the dashboard
with a DashboardStart request, and loads every view in headless Chromium (Debian's, driven by
Playwright), each time in a new browser context, so nothing is cached:

* first paint: the browser's first-contentful-paint (performance.getEntriesByType('paint'));
* data drawn: the page's `hippo:drawn:<view>` mark, set once the view's data is on the page and a frame
  has been asked for; both in ms from the start of navigation. "first" is the first load of the view
  (the map then reads every memory's strength), "again" the median of the --loads - 1 after it (the
  map reuses that reading while the store is unchanged, for up to a minute);
* page weight: bytes transferred (gzip where the response was compressed) for the HTML, JS, CSS and
  JSON of one load of the view, from the browser's Resource Timing entries;
* API: the view's JSON route alone, fetched by httpx (median of 5, after one warm-up);
* the daemon's RSS (VmRSS, and VmHWM, its peak) before the dashboard opens and after every view loaded,
  in a daemon started afresh on the filled store (one that has just slept on 100,000 memories holds
  the sleep's high-water mark, about 560 MB, whatever the dashboard does).

It saves a 1280x800 screenshot of each view per size under bench/screenshots/.

Usage: python bench/dashboard_perf.py [--sizes 1000,100000] [--loads 3] [--keep] [--no-screenshots]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from dashboard_data import build
from harness import (
    BenchError,
    Sandbox,
    call,
    kill_all_daemons,
    log,
    make_sandbox,
    proc_status_kb,
    start_daemon,
    stop_daemon,
)
from playwright.sync_api import Browser, sync_playwright

from hippoctl.protocol import messages as m

VIEWS = ("overview", "map", "pinned", "dormant", "conflicts", "sleeps", "tokens", "cards", "search")
SEARCH = "feature flag production"
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
DRAWN_WITHIN_MS = 600_000
TIMINGS = """(name) => {
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  const drawn = performance.getEntriesByName(`hippo:drawn:${name}`)[0];
  const nav = performance.getEntriesByType("navigation")[0];
  const resources = performance.getEntriesByType("resource").map((r) => [r.name, r.transferSize]);
  return { paint: paint ? paint.startTime : null, drawn: drawn.startTime, html: nav.transferSize, resources };
}"""


@dataclass
class ViewFigures:
    view: str
    paint_ms: list[float] = field(default_factory=list)
    drawn_ms: list[float] = field(default_factory=list)
    weight: dict[str, int] = field(default_factory=dict)
    api_ms: float = 0.0


def _address(view: str) -> str:
    return f"search?q={SEARCH.replace(' ', '%20')}" if view == "search" else view


def _weight(html: int, resources: list[list[Any]]) -> dict[str, int]:
    kinds = {"html": html, "js": 0, "css": 0, "json": 0}
    for name, size in resources:
        path = str(name).split("?")[0]
        kind = (
            "json"
            if "/api/" in path
            else "js"
            if path.endswith(".js")
            else "css"
            if path.endswith(".css")
            else None
        )
        if kind is not None:
            kinds[kind] += int(size)
    return kinds


def _load(
    browser: Browser, url: str, view: str, shot: Path | None
) -> tuple[float | None, float, dict[str, int]]:
    """One cold load of a view: (first paint ms, data drawn ms, bytes by kind)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(f"{url}#{_address(view)}")
        page.wait_for_selector(f"#view-{view}[data-state=ready]", state="attached", timeout=DRAWN_WITHIN_MS)
        timings = page.evaluate(TIMINGS, view)
        if shot is not None:
            page.screenshot(path=str(shot))
            _shrink(shot)
        return timings["paint"], timings["drawn"], _weight(timings["html"], timings["resources"])
    finally:
        context.close()


def _shrink(shot: Path) -> None:
    """A 256-colour PNG when pngquant is installed (apt-get install pngquant): a third of the bytes."""
    if shutil.which("pngquant"):
        subprocess.run(
            ["pngquant", "--quality", "60-90", "--strip", "--force", "--output", str(shot), "256", str(shot)],
            check=False,
        )


def _api_ms(client: httpx.Client, url: str, view: str) -> float:
    params = {"q": SEARCH} if view == "search" else {}
    times = []
    for i in range(6):
        start = time.perf_counter()
        answer = client.get(f"{url}api/{view}", params=params)
        if answer.status_code != 200:
            raise BenchError(f"api/{view} answered {answer.status_code}: {answer.text[:200]}")
        if i:
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _settled(sb: Sandbox) -> None:
    """Wait until the store is open and its mirrors checked (a pass a store makes as it opens)."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        reply = call(sb.sock, sb.home, sb.base, m.Status(), timeout=600)
        if isinstance(reply, m.Result) and reply.data["stores"][0]["mirrors"]["healed_at"]:
            return
        time.sleep(1)
    raise BenchError("the store's mirrors were not checked within 10 minutes")


def run_size(
    browser: Browser, size: int, loads: int, parent: str, keep: bool, shots: bool
) -> tuple[list[ViewFigures], dict[str, int]]:
    sb = make_sandbox(size, parent)
    log(f"size {size}: sandbox {sb.base}")
    try:
        stop_daemon(build(sb, size))
        proc = start_daemon(sb)
        _settled(sb)
        rss = {"before": proc_status_kb(proc.pid, "VmRSS")}
        opened = call(sb.sock, sb.home, sb.base, m.DashboardStart(port=0))
        if not isinstance(opened, m.Result):
            raise BenchError(f"dashboard did not open: {opened}")
        url = str(opened.data["url"])
        rss["opened"] = proc_status_kb(proc.pid, "VmRSS")
        figures = []
        with httpx.Client(timeout=600) as client:
            for view in VIEWS:
                row = ViewFigures(view)
                for i in range(loads):
                    label = "1k" if size == 1000 else "100k" if size == 100_000 else str(size)
                    shot = SCREENSHOTS / f"{view}-{label}.png" if shots and i == 0 else None
                    paint, drawn, weight = _load(browser, url, view, shot)
                    if paint is not None:
                        row.paint_ms.append(paint)
                    row.drawn_ms.append(drawn)
                    row.weight = weight
                row.api_ms = _api_ms(client, url, view)
                figures.append(row)
                log(f"size {size}: {view} drawn in {row.drawn_ms[0]:.0f} ms, then {row.drawn_ms[1:]}")
        rss["after"] = proc_status_kb(proc.pid, "VmRSS")
        rss["peak"] = proc_status_kb(proc.pid, "VmHWM")
        stop_daemon(proc)
        return figures, rss
    finally:
        kill_all_daemons()
        if not keep:
            shutil.rmtree(sb.base, ignore_errors=True)


def _table(size: int, figures: list[ViewFigures], rss: dict[str, int]) -> str:
    lines = [
        f"{size:,} memories: ms from navigation, each load in a new browser context; KB sent per load",
        f"{'view':<10}{'first paint':>12}{'drawn first':>12}{'again':>7}{'API ms':>9}"
        f"{'HTML':>7}{'JS':>7}{'CSS':>7}{'JSON':>8}{'total':>8}",
    ]
    for f in figures:
        w = f.weight
        paint = f"{statistics.median(f.paint_ms):.0f}" if f.paint_ms else "-"
        again = f"{statistics.median(f.drawn_ms[1:]):.0f}" if len(f.drawn_ms) > 1 else "-"
        kb = [w[k] / 1024 for k in ("html", "js", "css", "json")]
        cells = "".join(f"{v:>7.1f}" for v in kb[:3]) + f"{kb[3]:>8.1f}{sum(kb):>8.1f}"
        lines.append(f"{f.view:<10}{paint:>12}{f.drawn_ms[0]:>12.0f}{again:>7}{f.api_ms:>9.1f}{cells}")
    mb = {k: v / 1024 for k, v in rss.items()}
    lines.append(
        f"daemon RSS MB: before opening {mb['before']:.1f}, dashboard open {mb['opened']:.1f}, "
        f"after every view {mb['after']:.1f} (peak {mb['peak']:.1f})"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,100000", help="comma-separated store sizes")
    parser.add_argument("--loads", type=int, default=3, help="cold loads of each view")
    parser.add_argument("--keep", action="store_true", help="keep the sandboxes")
    parser.add_argument("--no-screenshots", action="store_true")
    parser.add_argument("--tmpdir", default="/tmp")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args(argv)
    if not os.access(args.chromium, os.X_OK):
        raise SystemExit(f"no chromium at {args.chromium} (apt-get install chromium)")
    SCREENSHOTS.mkdir(exist_ok=True)
    tables = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=args.chromium)
        log(f"chromium {browser.version}")
        try:
            for size in (int(s) for s in args.sizes.split(",") if s.strip()):
                figures, rss = run_size(
                    browser, size, args.loads, args.tmpdir, args.keep, not args.no_screenshots
                )
                tables.append(_table(size, figures, rss))
        finally:
            browser.close()
    print("\n\n".join(tables))
    return 0


if __name__ == "__main__":
    sys.exit(main())
