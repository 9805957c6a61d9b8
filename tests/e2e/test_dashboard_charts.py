"""The dashboard's charts as a person reads them (integrations.md §13): labels clear of the tick labels
around them, ISO dates on the time axes, and a sleep's summary naming what it did, in headless
Chromium on a real daemon."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Browser, Page

from e2e.dashboard_support import DESKTOP, PHONE, browser, open_dashboard, planted, screens, show
from e2e.sleep_support import project
from hippod.store.sqlite import sleep as sleep_rows
from hippod.store.sqlite.db import Database

if TYPE_CHECKING:
    from e2e.harness import Hippo

__all__ = ["browser", "screens"]  # module-scoped fixtures, used by name

SHARED = 3
ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# Page script: for the chart whose caption begins with the argument, where its drawing lies.
#  - marks: pixels in a mark's colours (the red dormant line's, the orange at-risk line's) drawn
#    outside the plotting area, where the axes' tick labels are; and red pixels beside the dormant
#    line inside it (its label, so a label that is not drawn at all does not pass);
#  - axis: the y axis's tick labels' left edge and the right edge of the band its title is drawn in
#    (CSS px from the plot's left): the tick labels are right-aligned `ticks.size + gap` left of the
#    plotting area, and uPlot puts the title's band beyond the axis's own width;
#  - times: the x axis's tick labels.
CHART = """(caption) => {
  const figure = [...document.querySelectorAll("figure.chart")]
    .find((f) => f.querySelector("figcaption").textContent.startsWith(caption));
  const u = figure.plot;
  const ratio = devicePixelRatio;
  const { left, top, width, height } = u.bbox;
  const canvas = u.ctx.canvas;
  const pixels = u.ctx.getImageData(0, 0, canvas.width, canvas.height).data;
  const line = Math.round(u.valToPos(0.05, "x", true));
  let outside = 0;
  let label = 0;
  for (let y = 0; y < canvas.height; y++) {
    for (let x = 0; x < canvas.width; x++) {
      const i = (y * canvas.width + x) * 4;
      const [r, g, b, a] = [pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3]];
      if (a < 128 || r < 120 || r - b < 80 || r - g < 60) continue;
      // Two pixels of slack: a series' line at the plot's edge is drawn half outside it.
      const margin = 2 * ratio;
      if (x < left - margin || y < top - margin || x >= left + width + margin) outside += 1;
      else if (r - g > 110 && Math.abs(x - line) > 2 * ratio) label += 1;
    }
  }
  const axis = u.axes[1];
  u.ctx.font = axis.font[0];
  const widest = Math.max(...axis._values.map((v) => u.ctx.measureText(v).width)) / ratio;
  const plotLeft = left / ratio;
  return {
    outside,
    label,
    ticksLeft: plotLeft - axis.ticks.size - axis.gap - widest,
    titleRight: plotLeft - axis._size,
    times: u.axes[0]._values,
  };
}"""


def chart(page: Page, caption: str) -> dict[str, Any]:
    found: dict[str, Any] = page.evaluate(CHART, caption)
    return found


def _ledger(db: str, tokens: int) -> None:
    """Large token counts on the global store's ledger over the last days (daemon stopped)."""
    conn = sqlite3.connect(db)
    with conn:
        for back in range(4):
            day = (date.today() - timedelta(days=back)).isoformat()
            conn.execute(
                "INSERT INTO token_ledger (ts, day, tenant_id, surface, kind, tokens, items) "
                "VALUES (?, ?, 'default', 'recall', 'sent', ?, 1)",
                (f"{day}T12:00:00.000Z", day, tokens * (back + 1)),
            )
    conn.close()


def _shared_by_the_last_sleep(db: str, shared: int) -> None:
    """Give the newest run the count sleep's share phase puts there after its commit (daemon stopped)."""

    async def run() -> None:
        database, _ = await Database.open(db)
        try:
            async with database.transaction() as conn:
                await sleep_rows.set_shared(conn, shared)
        finally:
            await database.close()

    # In a thread of its own: Playwright keeps an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, run()).result()


def test_labels_clear_the_ticks_dates_are_iso_and_a_share_only_sleep_says_so(
    hippo: Hippo, browser: Browser, screens: Path
) -> None:
    hippo.start()
    folder, db = project(hippo)
    planted(hippo, db, 60)
    hippo.ok("sleep", "--no-share", cwd=folder)  # merges, dormant moves: a sleep that did much
    quiet = hippo.json("sleep", "--no-share", cwd=folder)  # then one with nothing left to do
    assert (quiet["merged"], quiet["dormant_moved"], quiet["removed"]) == (0, 0, 0), quiet
    hippo.stop()
    _shared_by_the_last_sleep(db, SHARED)
    _ledger(str(Path(hippo.home, "hippo.db")), 2_500_000)
    hippo.start()
    reply = open_dashboard(hippo, cwd=folder)

    for viewport in (DESKTOP, PHONE):
        page = browser.new_page(viewport=viewport)
        try:
            show(page, reply["url"], "map")
            page.screenshot(path=str(screens / f"map-{viewport['width']}.png"))
            strength = chart(page, "Strength of every memory")
            assert strength["outside"] == 0, (viewport, strength)  # no label over the tick labels
            assert strength["label"] > 30, (viewport, strength)  # and the dormant line's is drawn
            for caption in ("Strength of every memory", "Decay to the dormant threshold"):
                found = chart(page, caption)
                assert found["ticksLeft"] >= found["titleRight"], (viewport, caption, found)

            show(page, reply["url"], "tokens")
            page.screenshot(path=str(screens / f"tokens-{viewport['width']}.png"))
            tokens = chart(page, "Tokens per day")
            assert tokens["ticksLeft"] >= tokens["titleRight"], (viewport, tokens)  # 10,000,000 fits
            assert tokens["times"] and all(ISO_DAY.fullmatch(t) for t in tokens["times"]), tokens["times"]

            show(page, reply["url"], "sleeps")
            page.screenshot(path=str(screens / f"sleeps-{viewport['width']}.png"))
            newest = page.inner_text("#view-sleeps .run summary")
            assert newest.endswith(f" · {quiet['active']} active · shared {SHARED}"), newest
            assert "merged 0" not in newest
            older = page.locator("#view-sleeps .run summary").nth(1).inner_text()
            assert "went dormant" in older and "shared" not in older, older
            sleeps = chart(page, "What each sleep did")
            assert sleeps["ticksLeft"] >= sleeps["titleRight"], (viewport, sleeps)
            assert not any("/" in str(t) for t in sleeps["times"]), sleeps["times"]
        finally:
            page.close()
